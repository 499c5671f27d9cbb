import { describe, expect, it } from "vitest";
import { outcomeOf, sendPreconditionCases } from "./send-preconditions.cases.js";
import {
  decideSend,
  isSendRefusal,
  sendRefusalCodes,
  sendRefusalError,
  sendRefusals,
  TESTING_ALLOWANCE_PER_MONTH,
} from "./send-preconditions.js";

describe("decideSend (the table test/send-preconditions.test.ts also runs against record_send)", () => {
  it.each(sendPreconditionCases.map((c) => [c.name, c] as const))("%s", (_name, { facts, expected }) => {
    expect(outcomeOf(decideSend(facts))).toBe(expected);
  });

  it("the table reaches every outcome", () => {
    const reached = new Set(sendPreconditionCases.map((c) => c.expected));
    for (const refusal of sendRefusals) expect(reached).toContain(sendRefusalCodes[refusal]);
    for (const outcome of ["repeat", "allowed, counted", "allowed, not counted"] as const) {
      expect(reached).toContain(outcome);
    }
  });
});

describe("the refusals", () => {
  it.each(sendRefusals.map((refusal) => [refusal]))("%s answers with its error and code", (refusal) => {
    const error = sendRefusalError(refusal, TESTING_ALLOWANCE_PER_MONTH);
    expect(error.code).toBe(sendRefusalCodes[refusal]);
    expect(error.kind).toBe(refusal === "tenant_not_found" ? "not_found" : "failed_precondition");
    expect(isSendRefusal(refusal)).toBe(true);
  });

  it("names the allowance when it is used up", () => {
    expect(sendRefusalError("testing_allowance_exhausted", 1000).message).toBe(
      "the testing plan's 1000 sends for this UTC month are used up; sign a commercial agreement to send more",
    );
  });

  it("recorded and claimed are outcomes of record_send, not refusals", () => {
    expect(isSendRefusal("recorded")).toBe(false);
    expect(isSendRefusal("claimed")).toBe(false);
  });
});
