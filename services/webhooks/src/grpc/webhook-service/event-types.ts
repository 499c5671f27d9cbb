/**
 * The event catalog as partners see it: every type, its emission, whether it can be subscribed
 * to, and for a subscribable one the JSON Schema of its envelope and an example.
 */
import { currentApiVersion } from "../../domain/endpoint.js";
import { eventCatalog } from "../../domain/event-catalog.js";
import { envelopeSchema, exampleEnvelope } from "../../domain/event-catalog-schema.js";
import type { WebhookHandlers } from "./context.js";

/** Each type's schema and example as JSON text, worked out once (empty for a coming-soon type). */
const served = new Map(
  eventCatalog.map((event) => {
    const schema = envelopeSchema(event.type);
    const example = exampleEnvelope(event.type);
    return [
      event.type,
      {
        schemaJson: schema === undefined ? "" : JSON.stringify(schema),
        exampleJson: example === undefined ? "" : JSON.stringify(example),
      },
    ] as const;
  }),
);

export function eventTypeHandlers(): WebhookHandlers<"listEventTypes"> {
  return {
    // eslint-disable-next-line @typescript-eslint/require-await
    async listEventTypes() {
      return {
        eventTypes: eventCatalog.map((event) => ({
          type: event.type,
          description: event.description,
          emission: event.emission,
          subscribable: event.subscribable,
          ...served.get(event.type)!,
        })),
        currentApiVersion,
      };
    },
  };
}
