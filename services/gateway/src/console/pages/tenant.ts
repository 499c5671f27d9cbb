import { TenantPlan } from "@platform/proto/notify/v1";
import type { ActivationManifest, Capability } from "@platform/proto/notify/v1/activation";
import type { ActivityItem } from "@platform/proto/notify/v1/projections";
import type { UsageMonth } from "@platform/proto/notify/v1/usage";
import type { Channel } from "@platform/proto/notify/v1/channel";
import { connectedChannel } from "../../routes/tenant/routes.js";
import type { ConsoleUser } from "../../db/console-store.js";
import { roleReaches, type ConsoleViewer } from "../../domain/console-role.js";
import { callService } from "../../http/api-error.js";
import { html, type SafeHtml } from "../html.js";
import { csrfField, idempotencyField, time } from "../layout.js";
import { ConsolePageError } from "../page-error.js";
import { formIdempotencyKey, page, redirect, type SignedInConsoleRoute, type SignedInRequest } from "../route.js";

const ACTIVITY_LIMIT = 50;

const planText: Record<number, string> = {
  [TenantPlan.TENANT_PLAN_TESTING]: "testing (1000 sends a month)",
  [TenantPlan.TENANT_PLAN_COMMERCIAL]: "commercial",
};

const percent = (part: number, whole: number) => Math.min(100, Math.round((part / whole) * 100));

function usageSection(usage: UsageMonth | undefined): SafeHtml {
  if (!usage) return html`<p>No usage recorded.</p>`;
  const used = Number(usage.tokensUsed);
  const limits = usage.limits;
  const caps = limits
    ? [
        { name: "Soft cap", cap: Number(limits.softCap), threshold: "soft_cap" },
        { name: "Hard cap", cap: Number(limits.hardCap), threshold: "hard_cap" },
      ]
    : [];
  return html`<p>
      <strong>${used.toLocaleString("en")}</strong> tokens used in ${usage.month} (UTC).
      ${limits ? "" : html`No caps are set: usage is not limited.`}
    </p>
    ${caps.map((cap) => {
      const crossed = usage.crossed.find((crossing) => crossing.threshold === cap.threshold);
      const label = `${cap.name}: ${used.toLocaleString("en")} of ${cap.cap.toLocaleString("en")} tokens`;
      return html`<div class="meter">
        <label for="meter-${cap.threshold}">${label}</label>
        <meter id="meter-${cap.threshold}" min="0" max="${cap.cap}" value="${Math.min(used, cap.cap)}">
          ${percent(used, cap.cap)}%
        </meter>
        ${
          crossed
            ? html`<span class="flag">reached at ${time(crossed.crossedAt)}</span>`
            : html`<span class="muted">${percent(used, cap.cap)}% used</span>`
        }
      </div>`;
    })}
    ${limits && html`<p class="muted">Limits last changed ${time(limits.updatedAt)} (version ${limits.version}).</p>`}`;
}

const stepText: Record<string, string> = {
  pending: "not started",
  in_progress: "in progress",
  done: "done",
  failed: "failed",
};

function activationSection(
  manifest: ActivationManifest | undefined,
  capabilities: Capability[],
  request: SignedInRequest,
): SafeHtml {
  if (!manifest) return html`<p>No activation record.</p>`;
  const canResume = roleReaches(request.viewer.role, "owner") && manifest.state !== "live";
  return html`<p>State: <strong>${manifest.state}</strong> (updated ${time(manifest.updatedAt)})</p>
    <ol class="checklist">
      ${manifest.steps.map(
        (step) =>
          html`<li class="step-${step.state}">
            <strong>${step.name}</strong>: ${stepText[step.state] ?? step.state}
            ${step.updatedAt && html`<span class="muted">(${time(step.updatedAt)})</span>`}
          </li>`,
      )}
    </ol>
    ${
      manifest.blockingReasons.length > 0 &&
      html`<h3>What blocks it</h3>
        <ul>
          ${manifest.blockingReasons.map(
            (reason) =>
              html`<li>
                <code>${reason.code}</code>${reason.capability && html` on <strong>${reason.capability}</strong>`} since
                ${time(reason.since)}
              </li>`,
          )}
        </ul>`
    }
    ${
      canResume &&
      html`<form method="post" action="/console/tenant/activation">
        ${csrfField(request.csrfToken)} ${idempotencyField()}
        <button type="submit">${manifest.state === "provisioning" ? "Start activation" : "Resume activation"}</button>
      </form>`
    }
    <h3 id="capabilities-heading">Capability report</h3>
    ${
      capabilities.length === 0
        ? html`<p>No capability has been checked.</p>`
        : html`<div class="table-scroll" tabindex="0" role="region" aria-label="Capability report table">
            <table aria-labelledby="capabilities-heading">
              <thead>
                <tr>
                  <th scope="col">Capability</th>
                  <th scope="col">State</th>
                  <th scope="col">Required</th>
                  <th scope="col">Last check</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                ${capabilities.map(
                  (capability) =>
                    html`<tr>
                      <td>${capability.name}</td>
                      <td>${capability.state}</td>
                      <td>${capability.required ? "yes" : "no"}</td>
                      <td>${capability.lastResult || "never"} ${time(capability.lastCheckedAt)}</td>
                      <td>${capability.reasonCode ? html`<code>${capability.reasonCode}</code>` : "—"}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }`;
}

/**
 * Who did it, as people read it: a console user by their email (the actor `console:<userId>`
 * resolved against the tenant's users, or `console:<email>` as it is), an API key by its id, any
 * other actor as it is; "—" when the event names nobody.
 */
export function actorText(actor: string, users: readonly ConsoleUser[]): string {
  if (!actor) return "—";
  const [kind, id = ""] = actor.split(/:(.*)/s);
  if (kind === "console") return users.find((user) => user.userId === id)?.email ?? id;
  if (kind === "api_key") return `API key ${id}`;
  return actor;
}

function activitySection(items: ActivityItem[], users: readonly ConsoleUser[]): SafeHtml {
  if (items.length === 0) return html`<p>No activity yet.</p>`;
  return html`<div class="table-scroll" tabindex="0" role="region" aria-label="Activity table">
    <table aria-labelledby="activity-heading">
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Event</th>
          <th scope="col">About</th>
          <th scope="col">State or reason</th>
          <th scope="col">By</th>
        </tr>
      </thead>
      <tbody>
        ${items.map(
          (item) =>
            html`<tr>
              <td>${time(item.occurredAt)}</td>
              <td><code>${item.type}</code></td>
              <td>${item.subjectKind} <code>${item.subjectId}</code></td>
              <td>${[item.state, item.reasonCode].filter(Boolean).join(" · ") || "—"}</td>
              <td>${actorText(item.actor, users)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** The tenant's own WhatsApp number: what the last check read of it. Never the token. */
function channelSection(channel: Channel | undefined): SafeHtml {
  if (!channel) {
    return html`<p>No WhatsApp number is connected: sends use the platform's number, if it has one.</p>`;
  }
  return html`<dl>
    <dt>Number</dt>
    <dd>
      ${channel.displayPhoneNumber || "not read yet"}
      <span class="muted">(id <code>${channel.phoneNumberId}</code>)</span>
    </dd>
    <dt>Display name</dt>
    <dd>${channel.verifiedName || "—"}</dd>
    <dt>Quality rating</dt>
    <dd>${channel.qualityRating || "—"}</dd>
    <dt>Status</dt>
    <dd>${channel.status || "—"}</dd>
    <dt>Last check</dt>
    <dd>
      ${channel.checkResult || "never"} ${channel.checkedAt && time(channel.checkedAt)}
      ${channel.reasonCode && html`<code>${channel.reasonCode}</code>`}
    </dd>
    <dt>Throughput</dt>
    <dd>${channel.messagesPerSecond} messages a second</dd>
  </dl>`;
}

function tenantSummary(
  tenant: { name: string; status: string; plan: TenantPlan; channelReady: boolean; createdAt: string },
  viewer: ConsoleViewer,
) {
  return html`<dl>
    <dt>Name</dt>
    <dd>${tenant.name}</dd>
    <dt>Id</dt>
    <dd><code>${viewer.tenantId}</code></dd>
    <dt>Status</dt>
    <dd>${tenant.status}</dd>
    <dt>Plan</dt>
    <dd>${planText[tenant.plan] ?? "testing"}</dd>
    <dt>Channel</dt>
    <dd>${tenant.channelReady ? "ready" : "not ready"}</dd>
    <dt>Created</dt>
    <dd>${time(tenant.createdAt)}</dd>
  </dl>`;
}

/** The tenant: its WhatsApp number, usage against its caps, the activation checklist and capability report, the activity feed. */
export const tenantPages: SignedInConsoleRoute[] = [
  {
    method: "GET",
    path: "/console/tenant",
    role: "viewer",
    summary: "The tenant: usage and caps, activation checklist, capability report and activity feed.",
    async handle(request, deps) {
      const { viewer, call } = request;
      const tenantId = viewer.tenantId;
      const [{ tenant }, { usage }, { manifest }, { capabilities }, { items }, users, channel] = await Promise.all([
        callService(deps.notify.getTenant({ tenantId }, call)),
        callService(deps.notify.getUsage({ tenantId }, call)),
        callService(deps.notify.getActivation({ tenantId }, call)),
        callService(deps.notify.getCapabilities({ tenantId }, call)),
        callService(deps.projections.listActivity({ tenantId, limit: ACTIVITY_LIMIT, cursor: "" }, call)),
        deps.store.listUsers(tenantId),
        callService(connectedChannel(deps, tenantId, call)),
      ]);
      if (!tenant) throw new ConsolePageError(404, "Not found", "This tenant no longer exists.");
      return page(
        "Tenant",
        html`${tenantSummary(tenant, viewer)}
          <section aria-labelledby="channel-heading">
            <h2 id="channel-heading">WhatsApp number</h2>
            ${channelSection(channel)}
          </section>
          <section aria-labelledby="usage-heading">
            <h2 id="usage-heading">Usage this month</h2>
            ${usageSection(usage)}
          </section>
          <section aria-labelledby="activation-heading">
            <h2 id="activation-heading"><span id="activation">Activation</span></h2>
            ${activationSection(manifest, capabilities, request)}
          </section>
          <section aria-labelledby="activity-heading">
            <h2 id="activity-heading">Activity (latest ${ACTIVITY_LIMIT})</h2>
            ${activitySection(items, users)}
          </section>`,
      );
    },
  },
  {
    method: "POST",
    path: "/console/tenant/activation",
    role: "owner",
    summary: "Starts or resumes activation (idempotent per form).",
    async handle({ viewer, call, form }, deps) {
      const idempotencyKey = formIdempotencyKey(form);
      const { manifest } = await callService(
        deps.notify.startActivation({ tenantId: viewer.tenantId, idempotencyKey }, call),
        { idempotencyKey, howToCheck: "Reload the tenant page to see the activation state" },
      );
      return redirect("/console/tenant#activation", {
        kind: "success",
        text: `Activation: ${manifest?.state ?? "requested"}.`,
      });
    },
  },
];
