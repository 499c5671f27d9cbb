/**
 * Test deliveries: any subscribable event type, so a partner can check their receiver (signature,
 * parsing) before real events flow. Its data.object is exactly the catalog's example of the type
 * (event-catalog-schema.ts), so it validates against the schema the catalog serves; the id, the
 * time and the tenant are the test delivery's own, and it is sent with livemode false.
 */
import { InvalidArgumentError } from "@platform/service-kit/errors";
import { eventCatalog, findEventType } from "./event-catalog.js";
import { exampleSnapshot } from "./event-catalog-schema.js";
import type { PlatformEvent } from "./envelope.js";

export class TestEventTypeUnknownError extends InvalidArgumentError {
  override name = "TestEventTypeUnknownError";
  constructor(type: string) {
    super("webhook.event_type_unknown", `${JSON.stringify(type.slice(0, 80))} is not an event type`);
  }
}

export class TestEventTypeNotSubscribableError extends InvalidArgumentError {
  override name = "TestEventTypeNotSubscribableError";
  constructor(type: string) {
    super("webhook.event_type_not_subscribable", `${JSON.stringify(type)} is coming soon and cannot be sent yet`);
  }
}

/** The event types a test delivery can be sent for: every subscribable one (each has an example). */
export const testableEventTypes: readonly string[] = Object.freeze(
  eventCatalog.filter((event) => event.subscribable).map((event) => event.type),
);

/**
 * The event of a test delivery for `type` (data.object: the type's example); throws TestEventTypeUnknownError or
 * TestEventTypeNotSubscribableError for a type that cannot be sent.
 */
export function buildTestEvent(options: { id: string; type: string; tenant: string; now: Date }): PlatformEvent {
  const known = findEventType(options.type);
  if (!known) throw new TestEventTypeUnknownError(options.type);
  const object = known.subscribable ? exampleSnapshot(options.type) : undefined;
  if (!object) throw new TestEventTypeNotSubscribableError(options.type);
  return { id: options.id, type: options.type, tenant: options.tenant, occurredAt: options.now, object };
}
