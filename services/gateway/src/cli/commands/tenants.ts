/** Tenants in notify: created, read, moved between plans, activated, their channel readied. */
import { ChannelState, TenantPlan } from "@platform/proto/notify/v1";
import { tenantToJson } from "../../routes/representations.js";
import { UsageError } from "../errors.js";
import { reachNotify, tenantFromNotify } from "../reach-service.js";
import { adminCommand } from "../resources.js";

const plans = { testing: TenantPlan.TENANT_PLAN_TESTING, commercial: TenantPlan.TENANT_PLAN_COMMERCIAL };
const channelStates = { ready: ChannelState.CHANNEL_STATE_READY, not_ready: ChannelState.CHANNEL_STATE_NOT_READY };

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
    name: "tenant channel",
    options: {
      id: { type: "string", required: true, value: "ID" },
      state: { type: "string", required: true, choices: ["ready", "not_ready"] },
    },
    does: "sets the tenant's channel readiness",
    async run({ id: tenantId, state }, resources) {
      return tenantFromNotify(resources, tenantId, () =>
        resources.notify().setChannelState({ tenantId, state: channelStates[state] }, resources.call()),
      );
    },
  }),
];
