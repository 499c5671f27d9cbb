import { describe, expect, it } from "vitest";
import { ApiError } from "../../http/api-error.js";
import { toSendNotificationRequest } from "./shapes.js";

describe("the HTTP shape of a notification request", () => {
  it("passes every string member on and names the others for notify to judge", () => {
    const request = toSendNotificationRequest(
      {
        to: "+447700900123",
        type: "update",
        clientName: "Ana",
        businessName: "Paws",
        message: "hi",
        sendAt: "2030-01-01",
        actor: { actorReference: "a-1", delegationReference: null, role: "x" },
      },
      "acme",
      "key-12345678",
    );
    expect(request).toEqual({
      tenantId: "acme",
      idempotencyKey: "key-12345678",
      to: "+447700900123",
      type: "update",
      clientName: "Ana",
      businessName: "Paws",
      message: "hi",
      actor: { actorReference: "a-1" },
      otherFields: ["sendAt", "actor.role"],
    });
  });

  it("treats a null actor as absent, so notify answers that actor is required", () => {
    expect(toSendNotificationRequest({ actor: null }, "t", "k").actor).toBeUndefined();
  });

  it.each([
    [[], "the request body must be a JSON object"],
    ["text", "the request body must be a JSON object"],
    [{ to: 447700900123 }, "to must be a string"],
    [{ clientName: null, when: 5 }, "clientName must be a string; when must be a string"],
    [{ actor: "me" }, "actor must be an object with actorReference"],
    [
      { actor: { actorReference: 1, delegationReference: 2 } },
      "actor.actorReference must be a string; actor.delegationReference must be a string or null",
    ],
  ])("refuses %j with 400 partner.notification_invalid: %s", (body, detail) => {
    let thrown: unknown;
    try {
      toSendNotificationRequest(body, "t", "k");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect({
      status: (thrown as ApiError).status,
      code: (thrown as ApiError).options.code,
      detail: (thrown as ApiError).message,
    }).toEqual({
      status: 400,
      code: "partner.notification_invalid",
      detail,
    });
  });
});
