/**
 * A valid snapshot (data.object, as JSON text) of each publishable event type for tests that do
 * not care about its content; `n` makes the ids differ. Snapshots are strict (event-snapshot.ts).
 */
export function sampleSnapshot(type: string, n: string | number = 1): string {
  const suffix = String(n)
    .replace(/[^A-Za-z0-9_.:-]/g, "_")
    .slice(0, 100);
  switch (type) {
    case "booking.created":
    case "booking.cancelled":
      return JSON.stringify({ booking_id: `bk_${suffix}` });
    case "conversation.started":
      return JSON.stringify({ conversation_id: `cv_${suffix}`, channel: "sms" });
    case "escalation.raised":
      return JSON.stringify({ escalation_id: `es_${suffix}`, reason_code: "escalation.ai_uncertain" });
    case "escalation.resolved":
      return JSON.stringify({ escalation_id: `es_${suffix}` });
    default:
      return "{}";
  }
}
