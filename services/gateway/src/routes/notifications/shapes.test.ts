import { describe, expect, it } from "vitest";
import { ApiError } from "../../http/api-error.js";
import { notificationRequestShape, toSendNotificationRequest } from "./shapes.js";

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

  // Bodies the shape passes unchanged skip its walk: the request must be what the schema's output gives.
  it.each([
    {},
    { to: "+447700900123", type: "reminder", clientName: "Ana", businessName: "Paws & Co", when: "Mon" },
    { type: "update", message: "", actor: { actorReference: "a", delegationReference: null } },
    { actor: { delegationReference: "d", z: 1, actorReference: "a", b: [], a: null } },
    { actor: {} },
    { actor: null, sendAt: "x", to: "1" },
    { z: 1, to: "1", a: { b: 2 }, actor: { extra: true } },
    JSON.parse('{"to":"1","__proto__":{"x":1},"actor":{"actorReference":"a"}}') as unknown,
    JSON.parse('{"actor":{"actorReference":"a","__proto__":{"x":1},"role":"r"}}') as unknown,
  ])("passes %j on as the schema's output says", (body) => {
    const notification = notificationRequestShape.parse(body);
    const declared = new Set(Object.keys(notificationRequestShape.shape));
    const expected: Record<string, unknown> = { tenantId: "t", idempotencyKey: "k", actor: undefined, otherFields: [] };
    for (const [name, value] of Object.entries(notification)) {
      if (name !== "actor" && declared.has(name) && value !== undefined) expected[name] = value;
    }
    if (notification.actor) {
      const { actorReference, delegationReference } = notification.actor;
      expected.actor = {
        ...(actorReference === undefined ? {} : { actorReference }),
        ...(delegationReference == null ? {} : { delegationReference }),
      };
    }
    expected.otherFields = Object.keys(body as object).flatMap((name) =>
      name === "actor"
        ? Object.keys(notification.actor ?? {})
            .filter((member) => member !== "actorReference" && member !== "delegationReference")
            .map((member) => `actor.${member}`)
        : declared.has(name)
          ? []
          : [name],
    );
    const request = toSendNotificationRequest(body, "t", "k");
    expect(request).toEqual(expected);
    expect(request.otherFields).toEqual(expected.otherFields);
  });
});
