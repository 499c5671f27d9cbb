/**
 * The README's reminder notification (spec 2.3), as the tests and benchmarks that send one through
 * the whole stack use it: what a partner's CRM sends for an appointment reminder.
 */
export const SAMPLE_REMINDER = Object.freeze({
  to: "+447700900123",
  type: "reminder",
  clientName: "Ana",
  businessName: "Paws & Co",
  serviceName: "grooming",
  when: "Mon 3 May 10:00",
  actor: Object.freeze({ actorReference: "crm-user-7" }),
});

/** The text the sandbox and WhatsApp channels render for SAMPLE_REMINDER. */
export const SAMPLE_REMINDER_TEXT = "Hi Ana, this is a reminder of your grooming with Paws & Co on Mon 3 May 10:00.";
