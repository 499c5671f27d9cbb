import type { Attempt, Delivery, GetDeliveryResponse, Recovery } from "@platform/proto/webhooks/v1";
import { html, type SafeHtml } from "../html.js";
import { csrfField, idempotencyField, time, utcText } from "../layout.js";
import { deliveryPath, endpointPath, recoveryPath, statusBadge } from "./webhooks.js";

/**
 * The markup of the console's delivery and recovery pages (their handlers are
 * pages/webhook-deliveries.ts): a delivery with every attempt, its payload and "copy as curl"; the
 * recovery's dry-run count and its progress.
 */

/** The receiver's answer as returned (the service keeps its first 4 KiB), as text. */
function responseBody(attempt: Attempt): SafeHtml {
  if (attempt.responseBody.length === 0) return html`<span class="muted">(empty)</span>`;
  return html`<pre class="response-body">${Buffer.from(attempt.responseBody).toString("utf8")}</pre>
    ${attempt.responseBodyTruncated && html`<p class="muted">Truncated: only the first 4 KiB are kept.</p>`}`;
}

/**
 * An attempt's row. `firstOfRun` is the number of the current run's first attempt when the
 * delivery was sent again (redriven or resent): the Run column then tells the runs apart.
 */
function attemptRow(attempt: Attempt, firstOfRun: number | undefined): SafeHtml {
  const run = firstOfRun === undefined ? undefined : attempt.number >= firstOfRun ? "current" : "earlier";
  return html`<tr data-attempt="${attempt.number}" data-run="${run ?? ""}">
    <th scope="row" data-label="#">${attempt.number}</th>
    ${run && html`<td data-label="Run">${run === "current" ? "Current run" : "Earlier run"}</td>`}
    <td data-label="Time">${time(attempt.attemptedAt)}</td>
    <td data-label="Outcome">${attemptOutcome(attempt.succeeded)}</td>
    <td data-label="Status" data-status-code="${attempt.statusCode ?? ""}">${attempt.statusCode ?? "—"}</td>
    <td data-label="Duration" data-duration-ms="${attempt.durationMs}">${attempt.durationMs} ms</td>
    <td data-label="Error class">${attempt.errorClass ? html`<code>${attempt.errorClass}</code>` : "—"}</td>
    <td data-label="Response body">${responseBody(attempt)}</td>
  </tr>`;
}

const attemptOutcome = (succeeded: boolean): SafeHtml =>
  succeeded
    ? html`<span class="status status-succeeded">Succeeded</span>`
    : html`<span class="status status-dead_lettered">Failed</span>`;

/**
 * The statuses a delivery can be sent again from (the service's redrivableStatuses): a succeeded
 * one is resent, a failed or dead-lettered one redriven; a pending or held one is still on its way.
 */
export const RESENDABLE = ["succeeded", "dead_lettered", "awaiting_retry"];

/**
 * The payload for people: JSON indented by two spaces (the envelope is always JSON); anything
 * that does not parse is shown as it is.
 */
export function prettyPayload(payload: string): string {
  try {
    return JSON.stringify(JSON.parse(payload), null, 2);
  } catch {
    return payload;
  }
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

/** What the delivery page shows. */
export interface DeliveryView {
  /** As the page's path names them. */
  endpointId: string;
  deliveryId: string;
  detail: GetDeliveryResponse;
  /** The viewer may redrive (admin and above). */
  canAct: boolean;
  csrfToken: string;
  /** "Copy as curl": the delivery's request, without the secret. */
  curl: string;
}

function deliverySummary(view: DeliveryView): SafeHtml {
  const { detail } = view;
  const d = detail.delivery!;
  const self = deliveryPath(view.endpointId, view.deliveryId);
  const latest = detail.attempts.at(-1);
  const waiting = detail.attempts.length === 0 && (d.status === "pending" || d.status === "awaiting_retry");
  const resendable = RESENDABLE.includes(d.status);
  const resend = d.status === "succeeded";
  return html`<section aria-labelledby="summary-heading" id="summary" class="card">
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
      resendable &&
      view.canAct &&
      html`<form method="post" action="${self}/redrive" id="redrive-form" class="actions">
        ${csrfField(view.csrfToken)} ${idempotencyField()}
        <button type="submit" class="primary">${resend ? "Resend this delivery" : "Redrive this delivery"}</button>
        <span class="muted"
          >A new run of attempts with the same event id and payload; the attempts so far stay listed.</span
        >
      </form>`
    }
  </section>`;
}

function attemptsTable(attempts: Attempt[], delivery: Delivery): SafeHtml {
  // attemptsTotal counts every run; attempts only the current one (a redrive or resend starts it at 0).
  const total = Number(delivery.attemptsTotal);
  const current = Number(delivery.attempts);
  const firstOfRun = total > current ? total - current + 1 : undefined;
  return html`<section aria-labelledby="attempts-heading" id="attempts" class="card">
    <h2 id="attempts-heading">Attempts</h2>
    ${
      attempts.length === 0
        ? html`<p>No attempt was made yet.</p>`
        : html`<div class="table-fit">
            <table id="attempt-table" class="responsive">
              <thead>
                <tr>
                  <th scope="col">#</th>
                  ${firstOfRun !== undefined && html`<th scope="col">Run</th>`}
                  <th scope="col">Time</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Status</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Error class</th>
                  <th scope="col">Response body</th>
                </tr>
              </thead>
              <tbody>
                ${attempts.map((attempt) => attemptRow(attempt, firstOfRun))}
              </tbody>
            </table>
          </div>`
    }
  </section>`;
}

/** A delivery: its summary and attempts (refreshed together while waiting), the payload, copy as curl. */
export function deliveryDetail(view: DeliveryView): SafeHtml {
  return html`<p><a href="${endpointPath(view.endpointId)}">Back to the endpoint</a></p>
    <div id="delivery">${deliverySummary(view)} ${attemptsTable(view.detail.attempts, view.detail.delivery!)}</div>
    <section aria-labelledby="payload-heading" id="payload" class="card">
      <h2 id="payload-heading">Payload</h2>
      <p class="muted">Indented for reading. The copy button copies it exactly as sent (the bytes that were signed).</p>
      <pre class="code"><code id="payload-body">${prettyPayload(view.detail.payload)}</code></pre>
      <pre hidden><code id="payload-exact">${view.detail.payload}</code></pre>
      <button type="button" data-copy="payload-exact" id="copy-payload" hidden>Copy the payload</button>
    </section>
    <section aria-labelledby="curl-heading" id="curl" class="card">
      <h2 id="curl-heading">Copy as curl</h2>
      <p>
        Sends this payload again with the delivery's headers; it signs with your copy of the secret, never shown here.
      </p>
      <pre><code id="curl-command">${view.curl}</code></pre>
      <button type="button" data-copy="curl-command" hidden>Copy as curl</button>
    </section>`;
}

/** The recovery's dry run: how many deliveries it would redeliver, and the button to run it. */
export function recoverPreview(view: {
  endpointId: string;
  since: string;
  count: number;
  csrfToken: string;
}): SafeHtml {
  const { since, count } = view;
  const self = endpointPath(view.endpointId);
  return html`<p id="would-recover" data-count="${count}">
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
        ${csrfField(view.csrfToken)} ${idempotencyField()}
        <input type="hidden" name="since" value="${since}" />
        <button type="submit">Redeliver ${count} ${count === 1 ? "delivery" : "deliveries"}</button>
      </form>`
    }
    <p><a href="${self}">Back to the endpoint</a></p>`;
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

/** A recovery's progress, refreshing itself until it has finished. */
export function recoveryDetail(view: { endpointId: string; recoveryId: string; recovery: Recovery }): SafeHtml {
  const { endpointId, recoveryId, recovery } = view;
  return html`<p><a href="${endpointPath(endpointId)}">Back to the endpoint</a></p>
    ${recoveryProgress(recovery, recoveryPath(endpointId, recoveryId))}
    <p class="muted">Recovery <code>${recoveryId}</code>, created ${utcText(new Date(recovery.createdAt))}.</p>`;
}
