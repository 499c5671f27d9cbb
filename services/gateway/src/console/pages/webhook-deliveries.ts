import type { Attempt, Recovery } from "@platform/proto/webhooks/v1";
import { roleReaches } from "../../domain/console-role.js";
import { callService } from "../../http/api-error.js";
import { curlCommand } from "../curl-command.js";
import { html, type SafeHtml } from "../html.js";
import { csrfField, idempotencyField, time, utcText } from "../layout.js";
import { ConsolePageError } from "../page-error.js";
import {
  formIdempotencyKey,
  page,
  redirect,
  type ConsoleDeps,
  type SignedInConsoleRoute,
  type SignedInRequest,
} from "../route.js";
import { deliveryPath, endpointPath, isFormRefusal, statusBadge } from "../webhook-views.js";

/**
 * A delivery (every attempt, the exact payload, the next retry, "copy as curl" without the secret)
 * and its redrive; the recovery of an endpoint (a dry run's count, then the throttled job and a
 * page following its progress).
 */

/** The receiver's answer as returned (the service keeps its first 4 KiB), as text. */
function responseBody(attempt: Attempt): SafeHtml {
  if (attempt.responseBody.length === 0) return html`<span class="muted">(empty)</span>`;
  return html`<pre class="response-body">${Buffer.from(attempt.responseBody).toString("utf8")}</pre>
    ${attempt.responseBodyTruncated && html`<p class="muted">Truncated: only the first 4 KiB are kept.</p>`}`;
}

function attemptRow(attempt: Attempt): SafeHtml {
  return html`<tr data-attempt="${attempt.number}">
    <th scope="row">${attempt.number}</th>
    <td>${time(attempt.attemptedAt)}</td>
    <td>${attempt.succeeded ? "Succeeded" : "Failed"}</td>
    <td data-status-code="${attempt.statusCode ?? ""}">${attempt.statusCode ?? "—"}</td>
    <td data-duration-ms="${attempt.durationMs}">${attempt.durationMs} ms</td>
    <td>${attempt.errorClass ? html`<code>${attempt.errorClass}</code>` : "—"}</td>
    <td>${responseBody(attempt)}</td>
  </tr>`;
}

/** While nothing is known yet, the page refreshes itself: htmx polling with JS, a meta refresh without. */
function refreshing(url: string, targetId: string): SafeHtml {
  return html`<p class="refreshing">
    <span hx-get="${url}" hx-trigger="every 2s" hx-select="#${targetId}" hx-target="#${targetId}" hx-swap="outerHTML"
      >This page refreshes by itself.</span
    >
    <a href="${url}">Reload</a>
    <noscript><meta http-equiv="refresh" content="2" /></noscript>
  </p>`;
}

async function deliveryPage(request: SignedInRequest, deps: ConsoleDeps) {
  const { viewer, call } = request;
  const endpointId = request.param("endpointId");
  const deliveryId = request.param("deliveryId");
  const tenantId = viewer.tenantId;
  const [{ endpoint }, detail] = await Promise.all([
    callService(deps.webhooks.getEndpoint({ tenantId, endpointId }, call)),
    callService(deps.webhooks.getDelivery({ tenantId, endpointId, deliveryId }, call)),
  ]);
  const d = detail.delivery!;
  const self = deliveryPath(endpointId, deliveryId);
  const latest = detail.attempts.at(-1);
  const waiting = detail.attempts.length === 0 && (d.status === "pending" || d.status === "awaiting_retry");
  const redrivable = d.status === "dead_lettered" || d.status === "awaiting_retry";
  const curl = curlCommand({ url: endpoint!.url, payload: detail.payload, eventId: d.eventId, deliveryId: d.id });
  return page(
    `Delivery ${d.id}`,
    html`<p><a href="${endpointPath(endpointId)}">Back to the endpoint</a></p>
      <div id="delivery">
        <section aria-labelledby="summary-heading" id="summary">
          <h2 id="summary-heading">Summary</h2>
          <dl>
            <dt>Status</dt>
            <dd>${statusBadge(d.status)}</dd>
            <dt>Event</dt>
            <dd><code id="event-id">${d.eventId}</code> (${d.eventType})${d.livemode ? "" : " · test event"}</dd>
            <dt>Attempts</dt>
            <dd id="attempt-count">${d.attemptsTotal} in all, ${d.attempts} in the current run</dd>
            <dt>Next retry due</dt>
            <dd id="next-attempt">${d.nextAttemptAt ? time(d.nextAttemptAt) : "None scheduled"}</dd>
            <dt>Created</dt>
            <dd>${time(d.createdAt)}</dd>
          </dl>
          ${
            latest &&
            html`<h3>The receiver's latest answer</h3>
              <p id="latest-answer">
                Status <strong>${latest.statusCode ?? "none"}</strong> in ${latest.durationMs} ms
                ${latest.errorClass && html`(<code>${latest.errorClass}</code>)`}
              </p>
              <div id="latest-answer-body">${responseBody(latest)}</div>`
          }
          ${waiting && html`<p id="waiting">No attempt yet: waiting for the receiver.</p>`}
          ${waiting && refreshing(self, "delivery")}
          ${
            redrivable &&
            roleReaches(viewer.role, "admin") &&
            html`<form method="post" action="${self}/redrive" id="redrive-form">
              ${csrfField(request.csrfToken)} ${idempotencyField()}
              <button type="submit">Redrive this delivery</button>
            </form>`
          }
        </section>
        <section aria-labelledby="attempts-heading" id="attempts">
          <h2 id="attempts-heading">Attempts</h2>
          ${
            detail.attempts.length === 0
              ? html`<p>No attempt was made yet.</p>`
              : html`<div class="table-scroll" tabindex="0" role="region" aria-labelledby="attempts-heading">
                  <table id="attempt-table">
                    <thead>
                      <tr>
                        <th scope="col">#</th>
                        <th scope="col">Time</th>
                        <th scope="col">Outcome</th>
                        <th scope="col">Status</th>
                        <th scope="col">Duration</th>
                        <th scope="col">Error class</th>
                        <th scope="col">Response body</th>
                      </tr>
                    </thead>
                    <tbody>
                      ${detail.attempts.map(attemptRow)}
                    </tbody>
                  </table>
                </div>`
          }
        </section>
      </div>
      <section aria-labelledby="payload-heading" id="payload">
        <h2 id="payload-heading">Payload (exactly as sent)</h2>
        <pre><code id="payload-body">${detail.payload}</code></pre>
      </section>
      <section aria-labelledby="curl-heading" id="curl">
        <h2 id="curl-heading">Copy as curl</h2>
        <p>
          Sends this payload again with the delivery's headers; it signs with your copy of the secret, never shown here.
        </p>
        <pre><code id="curl-command">${curl}</code></pre>
        <button type="button" data-copy="curl-command" hidden>Copy as curl</button>
      </section>`,
  );
}

async function redriveDelivery(request: SignedInRequest, deps: ConsoleDeps) {
  const { viewer, call, form } = request;
  const endpointId = request.param("endpointId");
  const deliveryId = request.param("deliveryId");
  const idempotencyKey = formIdempotencyKey(form);
  await callService(
    deps.webhooks.redriveDelivery(
      { tenantId: viewer.tenantId, endpointId, deliveryId, idempotencyKey, actor: call.actor },
      call,
    ),
    { idempotencyKey, howToCheck: "The delivery may have been redriven: inspect it" },
  );
  return redirect(deliveryPath(endpointId, deliveryId), {
    kind: "success",
    text: "The delivery is redriven: a fresh run of attempts starts now.",
  });
}

/**
 * The `since` of the recover form: a datetime-local value (read as UTC, as the label says) or an
 * RFC 3339 time with a zone; answered as RFC 3339 UTC.
 */
export function recoverSince(value: string): string | undefined {
  const text = value.trim();
  const local = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(text);
  const zoned = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(text);
  if (!local && !zoned) return undefined;
  const date = new Date(local ? `${text}Z` : text);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function sinceFrom(request: SignedInRequest): string {
  const since = recoverSince(request.form.get("since"));
  if (since === undefined) {
    throw new ConsolePageError(400, "Recover", "Enter the time to recover from as a date and time (UTC).");
  }
  return since;
}

const recoverRetry = (idempotencyKey: string) => ({
  idempotencyKey,
  howToCheck: "The recovery may have been created: look at the endpoint",
});

/** The dry run: how many deliveries a recovery since that time would redeliver, and the button to run it. */
async function recoverPreview(request: SignedInRequest, deps: ConsoleDeps) {
  const { viewer, call, form } = request;
  const endpointId = request.param("endpointId");
  const idempotencyKey = formIdempotencyKey(form);
  const since = sinceFrom(request);
  let count: number;
  try {
    const answer = await callService(
      deps.webhooks.recoverDeliveries(
        { tenantId: viewer.tenantId, endpointId, since, dryRun: true, idempotencyKey, actor: call.actor },
        call,
      ),
      recoverRetry(idempotencyKey),
    );
    count = Number(answer.wouldRecover);
  } catch (error) {
    if (!isFormRefusal(error)) throw error;
    throw new ConsolePageError(400, "Recover", `${error.message}. Go back and choose another time.`);
  }
  const self = endpointPath(endpointId);
  return page(
    "Recover failed deliveries",
    html`<p id="would-recover" data-count="${count}">
        ${
          count === 0
            ? html`No failed or dead-lettered delivery was created since ${time(since)}: there is nothing to recover.`
            : html`<strong>${count}</strong> failed or dead-lettered ${count === 1 ? "delivery" : "deliveries"} created
                since ${time(since)} would be redelivered, one by one.`
        }
      </p>
      ${
        count > 0 &&
        html`<form method="post" action="${self}/recover" id="recover-run-form">
          ${csrfField(request.csrfToken)} ${idempotencyField()}
          <input type="hidden" name="since" value="${since}" />
          <button type="submit">Redeliver ${count} ${count === 1 ? "delivery" : "deliveries"}</button>
        </form>`
      }
      <p><a href="${self}">Back to the endpoint</a></p>`,
  );
}

async function recoverRun(request: SignedInRequest, deps: ConsoleDeps) {
  const { viewer, call, form } = request;
  const endpointId = request.param("endpointId");
  const idempotencyKey = formIdempotencyKey(form);
  const since = sinceFrom(request);
  const answer = await callService(
    deps.webhooks.recoverDeliveries(
      { tenantId: viewer.tenantId, endpointId, since, dryRun: false, idempotencyKey, actor: call.actor },
      call,
    ),
    recoverRetry(idempotencyKey),
  );
  const recovery = answer.recovery!;
  return redirect(`${endpointPath(endpointId)}/recoveries/${encodeURIComponent(recovery.id)}`, {
    kind: "success",
    text: `Recovery started: ${recovery.total} deliveries to redeliver.`,
  });
}

const RECOVERY_STATE_TEXT: Record<string, string> = {
  queued: "Queued",
  running: "Running",
  completed: "Completed",
  failed: "Stopped",
};

function recoveryProgress(recovery: Recovery, self: string): SafeHtml {
  const finished = recovery.state === "completed" || recovery.state === "failed";
  const total = Number(recovery.total);
  const done = Number(recovery.done);
  return html`<section
    id="recovery-progress"
    aria-labelledby="progress-heading"
    aria-live="polite"
    data-state="${recovery.state}"
    data-total="${total}"
    data-done="${done}"
  >
    <h2 id="progress-heading">${RECOVERY_STATE_TEXT[recovery.state] ?? recovery.state}</h2>
    <progress max="${Math.max(total, 1)}" value="${total === 0 ? 1 : done}" aria-label="Deliveries handled">
      ${done} of ${total}
    </progress>
    <p id="recovery-counts">
      ${done} of ${total} handled: ${recovery.redriven} redelivered, ${recovery.skipped} skipped.
    </p>
    <dl>
      <dt>Since</dt>
      <dd>${time(recovery.since)}</dd>
      <dt>Started</dt>
      <dd>${time(recovery.startedAt)}</dd>
      <dt>Finished</dt>
      <dd>${time(recovery.finishedAt)}</dd>
      ${
        recovery.failureCode &&
        html`<dt>Why it stopped</dt>
          <dd><code>${recovery.failureCode}</code></dd>`
      }
    </dl>
    ${!finished && refreshing(self, "recovery-progress")}
  </section>`;
}

async function recoveryPage(request: SignedInRequest, deps: ConsoleDeps) {
  const { viewer, call } = request;
  const endpointId = request.param("endpointId");
  const recoveryId = request.param("recoveryId");
  const { recovery } = await callService(
    deps.webhooks.getRecovery({ tenantId: viewer.tenantId, endpointId, recoveryId }, call),
  );
  const self = `${endpointPath(endpointId)}/recoveries/${encodeURIComponent(recoveryId)}`;
  return page(
    "Recovery",
    html`<p><a href="${endpointPath(endpointId)}">Back to the endpoint</a></p>
      ${recoveryProgress(recovery!, self)}
      <p class="muted">Recovery <code>${recoveryId}</code>, created ${utcText(new Date(recovery!.createdAt))}.</p>`,
  );
}

/** The delivery and recovery pages and actions. */
export const webhookDeliveryRoutes: SignedInConsoleRoute[] = [
  {
    method: "GET",
    path: "/console/webhooks/:endpointId/deliveries/:deliveryId",
    role: "viewer",
    summary: "A delivery: every attempt with the receiver's answer, the exact payload, the next retry, copy as curl.",
    handle: deliveryPage,
  },
  {
    method: "POST",
    path: "/console/webhooks/:endpointId/deliveries/:deliveryId/redrive",
    role: "admin",
    summary: "Redrives one failed or dead-lettered delivery.",
    handle: redriveDelivery,
  },
  {
    method: "POST",
    path: "/console/webhooks/:endpointId/recover/preview",
    role: "admin",
    summary: "Recover, step 1: the dry run's count of failed and dead-lettered deliveries since a time.",
    handle: recoverPreview,
  },
  {
    method: "POST",
    path: "/console/webhooks/:endpointId/recover",
    role: "admin",
    summary: "Recover, step 2: starts the throttled recovery job and shows its progress.",
    handle: recoverRun,
  },
  {
    method: "GET",
    path: "/console/webhooks/:endpointId/recoveries/:recoveryId",
    role: "viewer",
    summary: "A recovery's progress; refreshes by itself until it has finished.",
    handle: recoveryPage,
  },
];
