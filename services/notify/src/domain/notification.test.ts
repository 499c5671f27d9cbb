import { describe, expect, it } from "vitest";
import {
  canonicalNotification,
  collapseToOneLine,
  maskRecipient,
  messageKeyFields,
  NotificationInvalidError,
  notificationTypes,
  RecipientInvalidError,
  renderNotification,
  renderParameters,
  requiredFields,
  retiredFields,
  retiredMessageKeys,
  retiredTypes,
  schedulingFields,
  templateFields,
  validateNotification,
  type NotificationInput,
  type NotificationType,
  type TemplateField,
} from "./notification.js";

const sample: Record<TemplateField, string> = {
  clientName: "Ana",
  businessName: "Paws & Co",
  serviceName: "grooming",
  when: "Mon 3 May 10:00",
  newWhen: "Tue 4 May 11:00",
  message: "We open late on Friday.",
};

function input(type: string, overrides: Partial<NotificationInput> = {}): NotificationInput {
  const fields = (notificationTypes as readonly string[]).includes(type)
    ? Object.fromEntries(requiredFields[type as NotificationType].map((f) => [f, sample[f]]))
    : {};
  return {
    to: "+447700900123",
    type,
    fields,
    actor: { actorReference: "crm-user-7", delegationReference: undefined },
    otherFields: [],
    ...overrides,
  };
}

/** The validation error's detail, or undefined when the input is accepted. */
function refusal(value: NotificationInput): { code: string; detail: string } | undefined {
  try {
    validateNotification(value);
    return undefined;
  } catch (error) {
    if (error instanceof NotificationInvalidError || error instanceof RecipientInvalidError) {
      return { code: error.code, detail: error.message };
    }
    throw error;
  }
}

describe("notification validation", () => {
  it.each(notificationTypes)("accepts %s with exactly its required fields", (type) => {
    const request = validateNotification(input(type));
    expect(request).toMatchObject({ type, recipient: "447700900123" });
    expect(request.actor).toEqual({ actorReference: "crm-user-7", delegationReference: null });
  });

  const everyRequiredField = notificationTypes.flatMap((type) => requiredFields[type].map((f) => [type, f] as const));
  it.each(everyRequiredField)("refuses %s without %s, naming the field", (type, field) => {
    const base = input(type);
    const rest = { ...base.fields };
    delete rest[field];
    expect(refusal({ ...base, fields: rest })).toEqual({
      code: "partner.notification_invalid",
      detail: `${field} is required for type ${type}`,
    });
    // Whitespace only is missing too: nothing would be left to render.
    expect(refusal({ ...base, fields: { ...base.fields, [field]: " \n\t\u2028 " } })?.detail).toBe(
      `${field} is required for type ${type}`,
    );
  });

  const boundaries: [string, string, string][] = [
    ["ASCII", "a".repeat(300), "a".repeat(301)],
    // One code point, two UTF-16 units: 300 emoji is 600 .length and still allowed.
    ["emoji", "😀".repeat(300), "😀".repeat(301)],
    // "e" + COMBINING ACUTE ACCENT is two code points (one grapheme): 150 of them is 300.
    ["combining marks", "e\u0301".repeat(150), `${"e\u0301".repeat(150)}x`],
  ];
  const everyTemplateField = templateFields.flatMap((field) => boundaries.map((b) => [field, ...b] as const));
  it.each(everyTemplateField)("allows %s of 300 code points (%s) and refuses 301", (field, _label, ok, tooLong) => {
    const type = notificationTypes.find((t) => requiredFields[t].includes(field))!;
    const base = input(type);
    expect(refusal({ ...base, fields: { ...base.fields, [field]: ok } })).toBeUndefined();
    expect(refusal({ ...base, fields: { ...base.fields, [field]: tooLong } })).toEqual({
      code: "partner.notification_invalid",
      detail: `${field} must be at most 300 characters (got 301)`,
    });
  });

  const retired = [...new Set([...retiredTypes, ...retiredMessageKeys])];
  const timing: [string, string[]][] = [
    ["alone", []],
    ["with sendAt", ["sendAt"]],
    ["with scheduledAt and deliveryMode", ["scheduledAt", "deliveryMode"]],
  ];
  const everyRetiredKey = retired.flatMap((key) => timing.map(([label, extra]) => [key, label, extra] as const));
  it.each(everyRetiredKey)("refuses retired key %s as an unknown type (%s)", (key, _label, extra) => {
    const answer = refusal(input(key, { fields: { ...sample }, otherFields: extra }));
    expect(answer?.code).toBe("partner.notification_invalid");
    expect(answer?.detail).toContain(`type "${key}" is not a supported notification type`);
    for (const field of extra) expect(answer?.detail).toContain(`${field} is not supported`);
  });

  it.each(["Reminder", "payment reminder", "on-my-way", "ready_for_pickup ", "unknown", "reminder\u0000"])(
    "refuses the unknown type %j",
    (type) => {
      expect(refusal(input(type, { fields: { ...sample } }))?.detail).toContain("is not a supported notification type");
    },
  );

  it.each([...retiredFields])("refuses the retired field %s", (field) => {
    expect(refusal(input("reminder", { otherFields: [field] }))).toEqual({
      code: "partner.notification_invalid",
      detail: `${field} is a retired field`,
    });
  });

  it.each([...schedulingFields, ...messageKeyFields, "colour", "actor.role"])("refuses the field %s", (field) => {
    const answer = refusal(input("update", { otherFields: [field] }));
    expect(answer?.code).toBe("partner.notification_invalid");
    expect(answer?.detail).toMatch(new RegExp(`^${field.replace(".", "\\.")} is not`));
  });

  it.each(["+12345678", "12345678", "+123456789012345", "447700900123"])("accepts the recipient %s", (to) => {
    expect(validateNotification(input("no_show", { to })).recipient).toBe(to.replace("+", ""));
  });

  it.each([
    "+1234567",
    "1234567890123456",
    "++447700900123",
    "+44 7700 900123",
    "44-7700-900123",
    "+٤٤٧٧٠٠٩٠٠١٢٣",
    " 447700900123",
  ])("refuses the recipient %j with partner.notification_recipient_invalid", (to) => {
    expect(refusal(input("no_show", { to }))).toEqual({
      code: "partner.notification_recipient_invalid",
      detail: "to must be a phone number in international format: 8-15 digits with an optional leading +",
    });
  });

  it("reports every problem at once, naming each field", () => {
    const answer = refusal({
      to: "12",
      type: "rescheduled",
      fields: { clientName: "x".repeat(301), serviceName: "cut" },
      actor: undefined,
      otherFields: ["sendAt", "paymentUrl"],
    });
    expect(answer?.code).toBe("partner.notification_invalid");
    expect(answer?.detail.split("; ")).toEqual([
      "paymentUrl is a retired field",
      "sendAt is not supported: sends are immediate and scheduling belongs to the caller",
      "to must be 8-15 digits with an optional leading +",
      "clientName must be at most 300 characters (got 301)",
      "when is required for type rescheduled",
      "newWhen is required for type rescheduled",
      "actor is required",
    ]);
  });

  it("requires type, to, actor and actor.actorReference; delegationReference is optional", () => {
    expect(refusal(input("update", { type: undefined }))?.detail).toBe("type is required");
    expect(refusal(input("update", { to: undefined }))?.detail).toBe("to is required");
    expect(refusal(input("update", { actor: undefined }))?.detail).toBe("actor is required");
    expect(refusal(input("update", { actor: { actorReference: undefined, delegationReference: "d" } }))?.detail).toBe(
      "actor.actorReference is required",
    );
    expect(refusal(input("update", { actor: { actorReference: " ", delegationReference: undefined } }))?.detail).toBe(
      "actor.actorReference is required",
    );
    const delegated = validateNotification(
      input("update", { actor: { actorReference: "a", delegationReference: "d-1" } }),
    );
    expect(delegated.actor).toEqual({ actorReference: "a", delegationReference: "d-1" });
    expect(
      refusal(input("update", { actor: { actorReference: "a", delegationReference: "d".repeat(301) } }))?.detail,
    ).toBe("actor.delegationReference must be at most 300 characters");
  });
});

describe("rendering", () => {
  it("collapses every kind of whitespace run to one space and trims", () => {
    expect(collapseToOneLine("  a\r\nb\tc\u2028d\u2029e\u0085f\u000bg\u000ch\u00a0i  \n")).toBe("a b c d e f g h i");
    expect(collapseToOneLine("one\n\n\n  two")).toBe("one two");
  });

  it.each([
    ["reminder", "Hi Ana, this is a reminder of your grooming with Paws & Co on Mon 3 May 10:00."],
    ["no_show", "Hi Ana, we missed you at your grooming appointment."],
    ["cancelled", "Hi Ana, your grooming on Mon 3 May 10:00 has been cancelled."],
    ["rescheduled", "Hi Ana, your grooming has moved from Mon 3 May 10:00 to Tue 4 May 11:00."],
    ["update", "Hi Ana, an update from Paws & Co: We open late on Friday."],
  ] as const)("renders %s with the DESIGN.md template", (type, text) => {
    expect(renderNotification(validateNotification(input(type)))).toBe(text);
  });

  it("renders collapsed fields and gives the provider its parameters in template order", () => {
    const request = validateNotification(
      input("reminder", {
        fields: {
          clientName: " Ana\r\n",
          businessName: "Paws\t&\u2028Co",
          serviceName: "groom\ning",
          when: "Mon\n10:00",
        },
      }),
    );
    expect(renderNotification(request)).toBe(
      "Hi Ana, this is a reminder of your groom ing with Paws & Co on Mon 10:00.",
    );
    expect(renderParameters(request)).toEqual(["Ana", "groom ing", "Paws & Co", "Mon 10:00"]);
  });

  it("fingerprints what was asked, not how the JSON was ordered", () => {
    const a = validateNotification(input("update"));
    const b = validateNotification({
      ...input("update"),
      fields: Object.fromEntries(Object.entries(input("update").fields).reverse()),
    });
    expect(canonicalNotification(a)).toBe(canonicalNotification(b));
    expect(canonicalNotification(a)).not.toBe(
      canonicalNotification(validateNotification(input("update", { to: "12345678" }))),
    );
  });

  it("masks all but the first and last two digits of a recipient for logs", () => {
    expect(maskRecipient("447700900123")).toBe("+44********23");
  });
});
