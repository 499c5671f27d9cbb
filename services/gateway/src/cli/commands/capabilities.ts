/** A tenant's capabilities in notify: a check's result reported as the platform's checks would. */
import { capabilityToJson, manifestToJson } from "../../routes/representations.js";
import { reachNotify } from "../reach-service.js";
import { adminCommand } from "../resources.js";

export const capabilityCommands = [
  adminCommand({
    name: "capability report",
    options: {
      tenant: { type: "string", required: true, value: "ID" },
      capability: { type: "string", required: true, value: "NAME" },
      result: { type: "string", required: true, choices: ["pass", "fail"] },
      reason: { type: "string", value: "CODE" },
    },
    does:
      "records a capability check result, as the platform's checks would (a fail needs --reason, a capability " +
      "reason code of the code catalogue); prints the capability, the activation manifest and the events emitted",
    // A fail needs --reason too (notify says so when it is missing).
    needs: "--tenant ID --capability NAME --result pass|fail [--reason CODE]",
    async run({ tenant: tenantId, capability, result, reason }, resources) {
      const request = { tenantId, capability, passed: result === "pass", reasonCode: reason ?? "" };
      const response = await reachNotify(resources, tenantId, () =>
        resources.notify().reportCapabilityCheck(request, resources.call()),
      );
      return {
        capability: response.capability ? capabilityToJson(response.capability) : null,
        activation: manifestToJson(response.manifest),
        emittedEvents: response.emittedEventTypes,
      };
    },
  }),
];
