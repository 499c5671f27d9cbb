/** Token usage entered through notify's UsageService, as the platform's metering would. */
import { usageToJson } from "../../routes/representations.js";
import { UsageError } from "../errors.js";
import { reachNotify } from "../reach-service.js";
import { adminCommand } from "../resources.js";

/** 1 to 2^53-1 tokens. */
function tokensOf(text: string): number {
  const tokens = /^[0-9]{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(tokens) || tokens < 1) {
    throw new UsageError("--tokens must be a whole number from 1 to 9007199254740991");
  }
  return tokens;
}

export const usageCommands = [
  adminCommand({
    name: "usage record",
    options: {
      tenant: { type: "string", required: true, value: "ID" },
      tokens: { type: "string", required: true, value: "N", parse: tokensOf },
      recordId: { type: "string", value: "ID" },
    },
    does:
      "records N tokens (1 to 2^53-1) of usage for the tenant in the current UTC month, as the platform's " +
      "metering would; a cap reached emits usage.threshold_crossed (once per cap and month). --record-id " +
      "makes a repeat count once. Prints the month's usage",
    async run({ tenant: tenantId, tokens, recordId }, resources) {
      const request = { tenantId, tokens: String(tokens), recordId: recordId ?? "" };
      const answer = await reachNotify(resources, tenantId, () =>
        resources.notify().recordUsage(request, resources.call()),
      );
      return { ...usageToJson(answer.usage), replayed: answer.replayed };
    },
  }),
];
