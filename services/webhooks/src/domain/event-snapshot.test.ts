import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { codeEntry } from "@platform/codes";
import { eventCatalog } from "./event-catalog.js";
import { snapshotCodes, snapshotProblems, snapshotSchemas } from "./event-snapshot.js";
import { buildTestEvent } from "./test-event.js";
import { InvalidPublishedEventError, publishableFamilies, validatePublishedEvent } from "./published-event.js";

const fieldsOf = (type: string, object: Record<string, unknown>) =>
  snapshotProblems(type, object).map((problem) => problem.field);

/** A sentence a customer could have written: what a snapshot must never carry. */
const text = "Hi, I need to move my appointment because my dog is sick";

describe("platform event snapshots: ids, states, timestamps and catalogue codes only", () => {
  it("has a schema for exactly the publishable catalog types", () => {
    const publishable = eventCatalog
      .filter((event) => event.subscribable && publishableFamilies.includes(event.family))
      .map((event) => event.type)
      .sort();
    expect(Object.keys(snapshotSchemas).sort()).toEqual(publishable);
    expect(publishable).toEqual([
      "booking.cancelled",
      "booking.created",
      "conversation.started",
      "escalation.raised",
      "escalation.resolved",
    ]);
  });

  it("docs/webhooks.md lists every field and every code of every snapshot", () => {
    const doc = readFileSync(new URL("../../../../docs/webhooks.md", import.meta.url), "utf8");
    const section = doc.slice(doc.indexOf("### Platform event snapshots"), doc.indexOf("## Envelope"));
    for (const [type, schema] of Object.entries(snapshotSchemas)) {
      expect(section, type).toContain(`\`${type}\``);
      for (const [field, rule] of Object.entries(schema.fields)) {
        expect(section, `${type} ${field}`).toContain(`\`${field}\``);
        const values = rule.kind === "enum" ? rule.values : rule.kind === "code" ? rule.codes : [];
        for (const value of values) expect(section, `${type} ${field} ${value}`).toContain(`\`${value}\``);
      }
    }
  });

  it("a test delivery of a publishable type carries a valid snapshot of it", () => {
    for (const type of Object.keys(snapshotSchemas)) {
      const event = buildTestEvent({ id: "evt_0123456789abcdef01234567", type, tenant: "acme", now: new Date() });
      expect(snapshotProblems(type, event.object), type).toEqual([]);
    }
  });

  it("every code a snapshot may carry is a catalogue reason code", () => {
    for (const code of snapshotCodes) expect(codeEntry(code)?.usedAs, code).toContain("reasonCode");
  });

  describe("conversation.started", () => {
    const type = "conversation.started";
    it("accepts a valid snapshot", () => {
      expect(
        fieldsOf(type, {
          conversation_id: "cv_1",
          channel: "voice",
          customer_id: "cus:42",
          started_at: "2026-11-22T10:00:00Z",
        }),
      ).toEqual([]);
      expect(fieldsOf(type, { conversation_id: "cv_1", channel: "web" })).toEqual([]);
    });
    it("refuses text, unknown fields, a bad channel and missing ids", () => {
      expect(fieldsOf(type, { conversation_id: "cv_1", channel: "whatsapp", message: text })).toEqual([
        "data.object.message",
      ]);
      expect(fieldsOf(type, { conversation_id: "cv_1", channel: "whatsapp", customer_id: text })).toEqual([
        "data.object.customer_id",
      ]);
      expect(fieldsOf(type, { conversation_id: "cv_1", channel: "pigeon" })).toEqual(["data.object.channel"]);
      expect(fieldsOf(type, {})).toEqual(["data.object.conversation_id", "data.object.channel"]);
      expect(fieldsOf(type, { conversation_id: 7, channel: "sms", started_at: "yesterday" })).toEqual([
        "data.object.conversation_id",
        "data.object.started_at",
      ]);
    });
  });

  for (const type of ["booking.created", "booking.cancelled"]) {
    describe(type, () => {
      it("accepts a valid snapshot", () => {
        expect(
          fieldsOf(type, {
            booking_id: "bk_1",
            conversation_id: "cv_1",
            service_id: "svc_groom",
            location_id: "loc_1",
            starts_at: "2026-12-01T09:00:00+01:00",
            status: "confirmed",
            reason_code: "booking.rescheduled",
          }),
        ).toEqual([]);
        expect(fieldsOf(type, { booking_id: "bk_1" })).toEqual([]);
      });
      it("refuses text, unknown fields, codes outside the list and a missing booking_id", () => {
        expect(fieldsOf(type, { booking_id: "bk_1", notes: text })).toEqual(["data.object.notes"]);
        expect(fieldsOf(type, { booking_id: "bk_1", status: text })).toEqual(["data.object.status"]);
        expect(fieldsOf(type, { booking_id: "bk_1", reason_code: "escalation.complaint" })).toEqual([
          "data.object.reason_code",
        ]);
        expect(fieldsOf(type, { booking_id: "bk_1", party_size: 2 })).toEqual(["data.object.party_size"]);
        expect(fieldsOf(type, { service_id: "svc_1" })).toEqual(["data.object.booking_id"]);
        expect(fieldsOf(type, { booking_id: "x".repeat(129) })).toEqual(["data.object.booking_id"]);
      });
    });
  }

  describe("escalation.raised", () => {
    const type = "escalation.raised";
    it("accepts a valid snapshot", () => {
      expect(
        fieldsOf(type, {
          escalation_id: "es_1",
          reason_code: "escalation.customer_requested_human",
          conversation_id: "c",
        }),
      ).toEqual([]);
    });
    it("refuses a free-text reason, an uncatalogued code, unknown fields and missing ids", () => {
      expect(fieldsOf(type, { escalation_id: "es_1", reason_code: text })).toEqual(["data.object.reason_code"]);
      expect(fieldsOf(type, { escalation_id: "es_1", reason_code: "escalation.made_up" })).toEqual([
        "data.object.reason_code",
      ]);
      expect(fieldsOf(type, { escalation_id: "es_1", reason_code: "escalation.complaint", transcript: [] })).toEqual([
        "data.object.transcript",
      ]);
      expect(fieldsOf(type, {})).toEqual(["data.object.escalation_id", "data.object.reason_code"]);
    });
  });

  describe("escalation.resolved", () => {
    const type = "escalation.resolved";
    it("accepts a valid snapshot", () => {
      expect(fieldsOf(type, { escalation_id: "es_1" })).toEqual([]);
      expect(fieldsOf(type, { escalation_id: "es_1", resolution_code: "escalation.resolved_by_staff" })).toEqual([]);
    });
    it("refuses text, a raise reason as resolution, unknown fields and a missing id", () => {
      expect(fieldsOf(type, { escalation_id: "es_1", resolution_code: "escalation.complaint" })).toEqual([
        "data.object.resolution_code",
      ]);
      expect(fieldsOf(type, { escalation_id: "es_1", summary: text })).toEqual(["data.object.summary"]);
      expect(fieldsOf(type, { conversation_id: "cv_1" })).toEqual(["data.object.escalation_id"]);
    });
  });

  it("validatePublishedEvent refuses a snapshot with event.invalid naming every problem", () => {
    const call = () =>
      validatePublishedEvent(
        {
          tenantId: "acme",
          type: "escalation.raised",
          dataJson: JSON.stringify({ reason_code: text, note: text }),
          eventId: "",
          occurredAt: "",
        },
        { now: new Date(), newId: () => "evt_1" },
      );
    expect(call).toThrow(InvalidPublishedEventError);
    try {
      call();
    } catch (error) {
      const refusal = error as InvalidPublishedEventError;
      expect(refusal.code).toBe("event.invalid");
      expect(refusal.problems.map((p) => p.field)).toEqual([
        "data.object.reason_code",
        "data.object.note",
        "data.object.escalation_id",
      ]);
      expect(refusal.message).toMatch(/data\.object\.note: is not a field of escalation\.raised snapshots/);
    }
  });
});
