/** Tenants in notify: created, read, moved between plans, activated, their channel readied. */
import { randomUUID } from "node:crypto";
import { ChannelState, TenantPlan } from "@platform/proto/notify/v1";
import { channelToJson } from "../../routes/channel/json.js";
import { tenantToJson } from "../../routes/representations.js";
import { UsageError } from "../errors.js";
import { reachNotify, tenantFromNotify } from "../reach-service.js";
import { adminCommand } from "../resources.js";

const plans = { testing: TenantPlan.TENANT_PLAN_TESTING, commercial: TenantPlan.TENANT_PLAN_COMMERCIAL };
const channelStates = { ready: ChannelState.CHANNEL_STATE_READY, not_ready: ChannelState.CHANNEL_STATE_NOT_READY };

/** `--template reminder=appointment_reminder:en_US` (repeatable as a comma list). */
function templateOf(text: string): { type: string; name: string; language: string } {
  const match = /^([a-z_]+)=([a-z0-9_]+):([A-Za-z_]+)$/.exec(text);
  if (!match)
    throw new UsageError(
      `--template ${JSON.stringify(text)} must be TYPE=NAME:LANG (reminder=appointment_reminder:en_US)`,
    );
  return { type: match[1]!, name: match[2]!, language: match[3]! };
}

function messagesPerSecondOf(text: string): number {
  if (!/^[1-9][0-9]{0,3}$/.test(text))
    throw new UsageError("--messages-per-second must be a whole number from 1 to 1000");
  return Number(text);
}

/** notify's int64 `expectedVersion`, as its decimal text. */
function expectedVersionOf(text: string): string {
  if (!/^[1-9][0-9]{0,15}$/.test(text)) throw new UsageError("--expected-version must be a positive integer");
  return text;
}

export const tenantCommands = [
  adminCommand({
    name: "tenant create",
    options: {
      name: { type: "string", required: true, value: "NAME" },
      id: { type: "string", value: "ID" },
      plan: { type: "string", choices: ["testing", "commercial"] },
    },
    does: "creates a tenant in notify (not activated; plan testing by default)",
    async run(options, resources) {
      const request = { id: options.id ?? "", name: options.name, plan: plans[options.plan ?? "testing"] };
      return tenantFromNotify(resources, request.id, () => resources.notify().createTenant(request, resources.call()));
    },
  }),
  adminCommand({
    name: "tenant get",
    options: { id: { type: "string", required: true, value: "ID" } },
    does: "prints the tenant record (plan, version, and on testing the month's allowance)",
    async run({ id: tenantId }, resources) {
      return tenantFromNotify(resources, tenantId, () => resources.notify().getTenant({ tenantId }, resources.call()));
    },
  }),
  adminCommand({
    name: "tenant plan",
    options: {
      id: { type: "string", required: true, value: "ID" },
      plan: { type: "string", required: true, choices: ["commercial", "testing"] },
      reason: {
        type: "string",
        required: true,
        value: "agreement_signed|card_saved|agreement_ended|card_removed|operator_correction",
      },
      expectedVersion: { type: "string", value: "N", parse: expectedVersionOf },
    },
    does: "moves the tenant to another plan at once (same plan again: unchanged, nothing recorded); prints the tenant and `changed`",
    needs: "--id ID --plan commercial|testing --reason REASON",
    async run({ id: tenantId, plan, reason, expectedVersion }, resources) {
      const request = { tenantId, plan: plans[plan], reason, expectedVersion, actor: "admin:cli" };
      const answer = await reachNotify(resources, tenantId, () =>
        resources.notify().changePlan(request, resources.call()),
      );
      return { ...tenantToJson(answer.tenant), changed: answer.changed };
    },
  }),
  adminCommand({
    name: "tenant activate",
    options: { id: { type: "string", required: true, value: "ID" } },
    does: "activation passes and the channel is ready",
    async run({ id: tenantId }, resources) {
      return tenantFromNotify(resources, tenantId, () =>
        resources.notify().activateTenant({ tenantId }, resources.call()),
      );
    },
  }),
  adminCommand({
    name: "tenant channel connect",
    options: {
      id: { type: "string", required: true, value: "ID" },
      waba: { type: "string", required: true, value: "WABA_ID" },
      phoneNumberId: { type: "string", required: true, value: "PHONE_NUMBER_ID" },
      token: { type: "string", required: true, value: "ACCESS_TOKEN" },
      template: { type: "string", list: true, value: "TYPE=NAME:LANG" },
      messagesPerSecond: { type: "string", value: "N", parse: messagesPerSecondOf },
      stopKeywords: { type: "string", list: true, value: "WORD" },
      startKeywords: { type: "string", list: true, value: "WORD" },
      expectedVersion: { type: "string", value: "N", parse: expectedVersionOf },
    },
    does: "connects (or replaces) the tenant's own WhatsApp number: its token is sealed, never printed; prints the channel (the number as the Cloud API reads it)",
    needs: "--id ID --waba WABA_ID --phone-number-id PHONE_NUMBER_ID --token ACCESS_TOKEN",
    async run(options, resources) {
      const request = {
        tenantId: options.id,
        // One connect per command line: a retry of the same command is a new connect (idempotent in effect).
        idempotencyKey: `cli-${randomUUID()}`,
        wabaId: options.waba,
        phoneNumberId: options.phoneNumberId,
        accessToken: options.token,
        templates: options.template.map(templateOf),
        messagesPerSecond: options.messagesPerSecond,
        stopKeywords: options.stopKeywords,
        startKeywords: options.startKeywords,
        expectedVersion: options.expectedVersion,
        actor: "admin:cli",
      };
      const answer = await reachNotify(resources, options.id, () =>
        resources.notify().connectChannel(request, resources.call()),
      );
      return { ...channelToJson(answer.channel), created: answer.created, tenantVersion: Number(answer.tenantVersion) };
    },
  }),
  adminCommand({
    name: "tenant channel",
    options: {
      id: { type: "string", required: true, value: "ID" },
      state: { type: "string", required: true, choices: ["ready", "not_ready"] },
    },
    does: "sets the tenant's channel readiness by hand (the operator's override; a connected number's checks set it too)",
    async run({ id: tenantId, state }, resources) {
      return tenantFromNotify(resources, tenantId, () =>
        resources.notify().setChannelState({ tenantId, state: channelStates[state] }, resources.call()),
      );
    },
  }),
];
