/** A recipient's consent to a tenant's messages, kept by notify (which validates the number). */
import { reachNotify } from "../reach-service.js";
import { adminCommand, type Resources } from "../resources.js";

const recipient = {
  id: { type: "string", required: true, value: "ID" },
  to: { type: "string", required: true, value: "PHONE" },
} as const;

function setConsent(optedOut: boolean, { id, to }: { id: string; to: string }, resources: Resources) {
  const request = { tenantId: id, to, optedOut };
  return reachNotify(resources, id, () => resources.notify().setRecipientConsent(request, resources.call()));
}

export const consentCommands = [
  adminCommand({
    name: "tenant opt-out",
    options: recipient,
    does: "records that the recipient opted out of the tenant's messages (sends to it answer 409)",
    run: (options, resources) => setConsent(true, options, resources),
  }),
  adminCommand({
    name: "tenant opt-in",
    options: recipient,
    does: "withdraws the recipient's opt-out",
    run: (options, resources) => setConsent(false, options, resources),
  }),
];
