/** Platform events published through the webhooks service's internal event contract. */
import { UsageError } from "../errors.js";
import { reachService, requireTenants } from "../reach-service.js";
import { adminCommand } from "../resources.js";

/** The snapshot as given, once it is known to be a JSON object. */
function snapshotJsonOf(text: string): string {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--data is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new UsageError("--data must be a JSON object (the snapshot of the affected object)");
  }
  return text;
}

export const eventCommands = [
  adminCommand({
    name: "event emit",
    options: {
      tenant: { type: "string", required: true, value: "ID" },
      type: { type: "string", required: true, value: "TYPE" },
      data: { type: "string", required: true, value: "JSON", parse: snapshotJsonOf },
      id: { type: "string", value: "EVENT_ID" },
    },
    does:
      "publishes a platform event (conversation.started, booking.created, booking.cancelled, escalation.raised, " +
      "escalation.resolved) through the internal event contract, as the platform would; prints its id (and its traceId when OTEL_EXPORTER_OTLP_ENDPOINT is set). --data is " +
      "the snapshot: a JSON object of the type's fields only, ids, states, RFC 3339 times and catalogue reason " +
      "codes, never text (docs/webhooks.md lists them; e.g. booking.created needs booking_id). capability.* come " +
      "from `capability report`, tenant.* from activation, usage.* from metering: they cannot be emitted. " +
      "--id makes a republish of the same occurrence a no-op",
    async run({ tenant: tenantId, type, data, id }, resources) {
      await requireTenants(resources, [tenantId]);
      const request = { tenantId, type, dataJson: data, eventId: id ?? "", occurredAt: "" };
      const published = await reachService("webhooks", resources.eventsAddress, tenantId, () =>
        resources.events().publishEvent(request, resources.call()),
      );
      return {
        id: published.eventId,
        tenant: tenantId,
        type,
        duplicate: published.duplicate,
        ...(resources.traceId ? { traceId: resources.traceId } : {}),
      };
    },
  }),
];
