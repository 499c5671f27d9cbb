/** The event catalog as partners see it: every type, its emission, and whether it can be subscribed to. */
import { currentApiVersion } from "../../domain/endpoint.js";
import { eventCatalog } from "../../domain/event-catalog.js";
import type { WebhookHandlers } from "./context.js";

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
        })),
        currentApiVersion,
      };
    },
  };
}
