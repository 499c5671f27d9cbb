import type { Delivery, Endpoint, EventType, HourlyAttempts, Recovery } from "@platform/proto/webhooks/v1";
import { deliveryChart } from "../delivery-chart.js";
import { html, type SafeHtml } from "../html.js";
import { csrfField, idempotencyField, time } from "../layout.js";
import {
  attentionNote,
  deliveryPath,
  endpointPath,
  eventTypeFieldset,
  healthBadge,
  eventTypeSelect,
  statusBadge,
  statusSelect,
  successRateText,
  versionField,
} from "./webhooks.js";
import { MESSAGE_LOG } from "./webhook-messages.js";

/**
 * The markup of the console's webhook endpoint pages (their handlers are pages/webhook-endpoints.ts):
 * the list, the create and edit form, the endpoint with its settings, chart, actions and
 * deliveries ledger, the rotation form, and the secret shown once.
 */

/** The list of endpoints, and where the pages go back to. */
export const ENDPOINT_LIST = "/console/webhooks";

function endpointRow(endpoint: Endpoint): SafeHtml {
  return html`<tr data-endpoint-id="${endpoint.id}">
    <td data-label="URL"><a href="${endpointPath(endpoint.id)}" class="url">${endpoint.url}</a></td>
    <td data-label="Description">${endpoint.description}</td>
    <td data-label="Health">${healthBadge(endpoint.health)}</td>
    <td data-label="Success rate (24 h)" data-success-rate="${endpoint.successRate24h ?? ""}">
      ${successRateText(endpoint.successRate24h, endpoint.attempts24h)}
    </td>
    <td data-label="Attention">${attentionNote(endpoint) || "—"}</td>
  </tr>`;
}

/** The list page: the endpoints (or that there are none), the link to add one, the next page. */
export function endpointList(view: { endpoints: Endpoint[]; canAct: boolean; next: string }): SafeHtml {
  return html`<div class="toolbar">
      ${view.canAct && html`<a href="/console/webhooks/new" id="new-endpoint" class="button primary">Add an endpoint</a>`}
      <a href="${MESSAGE_LOG}" id="message-log-link">Message log</a>
    </div>
    ${
      view.endpoints.length === 0
        ? html`<p id="no-endpoints" class="empty">No webhook endpoints yet.</p>`
        : html`<div class="table-fit">
            <table id="endpoints" class="responsive">
              <caption>
                Endpoints, newest first
              </caption>
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Description</th>
                  <th scope="col">Health</th>
                  <th scope="col">Success rate (24 h)</th>
                  <th scope="col">Attention</th>
                </tr>
              </thead>
              <tbody>
                ${view.endpoints.map(endpointRow)}
              </tbody>
            </table>
          </div>`
    }
    ${view.next && html`<p><a href="${view.next}" rel="next">Next page</a></p>`}`;
}

/** The create and edit form's fields. */
export interface EndpointFormValues {
  url: string;
  description: string;
  eventTypes: string[];
  /** As entered: deliveries per second, empty for none. */
  rateLimit: string;
}

export function endpointForm(
  csrfToken: string,
  options: {
    action: string;
    submit: string;
    values: EndpointFormValues;
    choices: string[];
    version?: string;
    error?: string;
  },
): SafeHtml {
  return html`${options.error && html`<p class="flash error" role="alert" id="form-error">${options.error}</p>`}
    <form class="stacked" method="post" action="${options.action}" id="endpoint-form">
      ${csrfField(csrfToken)} ${idempotencyField()} ${options.version && versionField(options.version)}
      <label for="url">URL (https)</label>
      <input id="url" name="url" type="url" required value="${options.values.url}" />
      <label for="description">Description</label>
      <input id="description" name="description" required maxlength="500" value="${options.values.description}" />
      ${eventTypeFieldset(options.choices, options.values.eventTypes)}
      <label for="rate-limit">Rate limit (deliveries per second, empty for none)</label>
      <input
        id="rate-limit"
        name="rateLimit"
        type="number"
        min="1"
        max="10000"
        step="1"
        value="${options.values.rateLimit}"
      />
      <button type="submit" class="primary">${options.submit}</button>
    </form>`;
}

/** The page that shows a secret, once: after create and after rotate (never on a replay). */
export function secretShown(endpointId: string, secret: string, what: string): SafeHtml {
  return html`<section aria-labelledby="secret-heading" id="secret">
    <h2 id="secret-heading">Signing secret</h2>
    <p>${what} Copy it now: it is shown only this once and cannot be read again.</p>
    <pre><code id="new-secret">${secret}</code></pre>
    <button type="button" data-copy="new-secret" hidden>Copy the secret</button>
    <p><a href="${endpointPath(endpointId)}">Go to the endpoint</a></p>
  </section>`;
}

export function replayedNotice(endpointId: string, what: string): SafeHtml {
  return html`<p role="status" id="replayed">
      ${what} was already done by this same form; its secret was shown only once, then. If it was not saved, rotate the
      secret again.
    </p>
    <p><a href="${endpointPath(endpointId)}">Go to the endpoint</a></p>`;
}

/** The ledger's filters, from the page's query ("" when absent). */
export interface LedgerFilters {
  status: string;
  eventType: string;
  eventId: string;
}

/** What the endpoint page shows. */
export interface EndpointView {
  endpoint: Endpoint;
  /** The viewer may act (admin and above): the action forms are shown. */
  canAct: boolean;
  csrfToken: string;
  hourly: HourlyAttempts[];
  recoveries: Recovery[];
  catalog: EventType[];
  filters: LedgerFilters;
  /** The query filters a value (the ledger shows "Clear filters"). */
  filtered: boolean;
  deliveries: Delivery[];
  /** The ledger's next page, "" when there is none. */
  next: string;
  /** The recover form's default time (datetime-local, UTC). */
  recoverSince: string;
}

function endpointSettings(view: EndpointView): SafeHtml {
  const e = view.endpoint;
  const self = endpointPath(e.id);
  return html`<section aria-labelledby="settings-heading" id="settings" class="card">
    <h2 id="settings-heading">Settings</h2>
    <dl>
      <dt>URL</dt>
      <dd id="endpoint-url">${e.url}</dd>
      <dt>Description</dt>
      <dd id="endpoint-description">${e.description}</dd>
      <dt>Event filters</dt>
      <dd id="endpoint-event-types">${e.eventTypes.map((type) => html`<code>${type}</code> `)}</dd>
      <dt>Rate limit</dt>
      <dd id="rate-limit">${e.rateLimit === undefined ? "None" : `${e.rateLimit} deliveries per second`}</dd>
      <dt>Health</dt>
      <dd>${healthBadge(e.health)}</dd>
      <dt>Success rate (24 h)</dt>
      <dd id="success-rate">${successRateText(e.successRate24h, e.attempts24h)}</dd>
      <dt>Needs attention</dt>
      <dd id="attention">${attentionNote(e) || "No"}</dd>
      <dt>Paused</dt>
      <dd id="paused">${e.paused ? "Yes: new deliveries are held" : "No"}</dd>
      <dt>Payload version</dt>
      <dd>${e.apiVersion}</dd>
      <dt>Version</dt>
      <dd id="endpoint-version">${e.version}</dd>
      <dt>Created</dt>
      <dd>${time(e.createdAt)}</dd>
      <dt>Updated</dt>
      <dd>${time(e.updatedAt)}</dd>
      ${
        e.previousSecretExpiresAt &&
        html`<dt>Previous secret signs until</dt>
          <dd>${time(e.previousSecretExpiresAt)}</dd>`
      }
    </dl>
    ${
      view.canAct &&
      html`<div class="actions">
        <a href="${self}/edit" id="edit-endpoint">Edit settings</a>
        <form
          method="post"
          action="${self}/${e.paused ? "resume" : "pause"}"
          id="${e.paused ? "resume" : "pause"}-form"
        >
          ${csrfField(view.csrfToken)} ${idempotencyField()} ${versionField(e.version)}
          <button type="submit">${e.paused ? "Resume the endpoint" : "Pause the endpoint"}</button>
        </form>
        <a href="${self}/rotate-secret" id="rotate-secret">Rotate the signing secret</a>
        <a href="${self}/delete" id="delete-endpoint" class="danger">Delete the endpoint</a>
      </div>`
    }
  </section>`;
}

function attemptsChart(hourly: HourlyAttempts[]): SafeHtml {
  return html`<section aria-labelledby="chart-heading" id="chart" class="card">
    <h2 id="chart-heading">Attempts in the last 24 hours</h2>
    ${deliveryChart(
      hourly.map((hour) => ({
        start: hour.start,
        succeeded: Number(hour.succeeded),
        failed: Number(hour.failed),
      })),
    )}
  </section>`;
}

function recentRecoveries(self: string, recoveries: Recovery[]): SafeHtml {
  return html`<section aria-labelledby="recoveries-heading" id="recoveries" class="card">
    <h2 id="recoveries-heading">Recent recoveries</h2>
    <ul>
      ${recoveries.map(
        (r) =>
          html`<li data-recovery-id="${r.id}" data-state="${r.state}">
            <a href="${self}/recoveries/${r.id}">${r.state}: ${r.done} of ${r.total} handled</a>, since
            ${time(r.since)}, asked ${time(r.createdAt)}
          </li>`,
      )}
    </ul>
  </section>`;
}

/** The admin's forms below the chart: send a test event, recover failed deliveries. */
function endpointActions(view: EndpointView): SafeHtml {
  const self = endpointPath(view.endpoint.id);
  const subscribed = subscribedTypes(view.endpoint.eventTypes, view.catalog);
  return html`<section aria-labelledby="test-heading" id="test" class="card">
      <h2 id="test-heading">Send a test event</h2>
      ${
        subscribed.length === 0
          ? html`<p id="no-test-types">The endpoint subscribes to no event type of the catalog.</p>`
          : html`<form class="stacked" method="post" action="${self}/test" id="test-form">
              ${csrfField(view.csrfToken)} ${idempotencyField()}
              <label for="test-event-type">Event type (of those the endpoint subscribes to)</label>
              <select id="test-event-type" name="eventType" required>
                ${subscribed.map((type) => html`<option value="${type}">${type}</option>`)}
              </select>
              <button type="submit">Send the test event</button>
            </form>`
      }
    </section>
    <section aria-labelledby="recover-heading" id="recover" class="card">
      <h2 id="recover-heading">Recover failed deliveries</h2>
      <p>
        Redeliver every failed or dead-lettered delivery created since a time. You will see how many first, then
        confirm.
      </p>
      <form class="stacked" method="post" action="${self}/recover/preview" id="recover-form">
        ${csrfField(view.csrfToken)} ${idempotencyField()}
        <label for="recover-since">Since (UTC)</label>
        <input id="recover-since" name="since" type="datetime-local" required value="${view.recoverSince}" />
        <button type="submit">Count the deliveries to recover</button>
      </form>
    </section>`;
}

function ledgerFilterForm(view: EndpointView): SafeHtml {
  const { filters } = view;
  const self = endpointPath(view.endpoint.id);
  return html`<form method="get" action="${self}" id="ledger-filters" class="filters" role="search">
    <div class="field">
      <label for="filter-status">Status</label>
      ${statusSelect("filter-status", filters.status)}
    </div>
    <div class="field">
      <label for="filter-event-type">Event type</label>
      ${eventTypeSelect("filter-event-type", view.catalog, filters.eventType)}
    </div>
    <div class="field">
      <label for="filter-event-id">Event id</label>
      <input id="filter-event-id" name="eventId" value="${filters.eventId}" spellcheck="false" />
    </div>
    <div class="field buttons">
      <button type="submit">Filter</button>
      ${view.filtered && html`<a href="${self}#deliveries">Clear filters</a>`}
    </div>
  </form>`;
}

function ledgerRow(endpointId: string, d: Delivery): SafeHtml {
  return html`<tr data-delivery-id="${d.id}">
    <td data-label="Delivery">
      <a href="${deliveryPath(endpointId, d.id)}" class="id">${d.id}</a>
      ${d.livemode ? "" : html`<span class="tag">test</span>`}
    </td>
    <td data-label="Event type"><code>${d.eventType}</code></td>
    <td data-label="Event id"><code class="id">${d.eventId}</code></td>
    <td data-label="Status">${statusBadge(d.status)}</td>
    <td data-label="Attempts" class="number">${d.attemptsTotal}</td>
    <td data-label="Last answer">${d.lastStatusCode ?? d.lastError ?? "—"}</td>
    <td data-label="Next attempt">${time(d.nextAttemptAt)}</td>
    <td data-label="Created">${time(d.createdAt)}</td>
  </tr>`;
}

function deliveriesLedger(view: EndpointView): SafeHtml {
  return html`<section aria-labelledby="deliveries-heading" id="deliveries">
    <h2 id="deliveries-heading">Deliveries</h2>
    ${ledgerFilterForm(view)}
    ${
      view.deliveries.length === 0
        ? html`<p id="no-deliveries">No deliveries${view.filtered ? " match these filters" : ""}.</p>`
        : html`<div class="table-fit">
            <table id="ledger" class="responsive">
              <caption>
                Deliveries, newest first
              </caption>
              <thead>
                <tr>
                  <th scope="col">Delivery</th>
                  <th scope="col">Event type</th>
                  <th scope="col">Event id</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last answer</th>
                  <th scope="col">Next attempt</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                ${view.deliveries.map((d) => ledgerRow(view.endpoint.id, d))}
              </tbody>
            </table>
          </div>`
    }
    ${view.next && html`<p><a href="${view.next}" rel="next" id="ledger-next">Next page</a></p>`}
  </section>`;
}

/** An endpoint: settings, the attempts per hour, recent recoveries, the admin's actions, the ledger. */
export function endpointDetail(view: EndpointView): SafeHtml {
  const recoveries = view.recoveries.length > 0 && recentRecoveries(endpointPath(view.endpoint.id), view.recoveries);
  // Two columns on wide screens (settings beside the chart and the admin's forms), one on narrow ones.
  return html`<p class="breadcrumb"><a href="${ENDPOINT_LIST}">All endpoints</a></p>
    <div class="endpoint-layout">
      <div class="endpoint-main">${endpointSettings(view)}</div>
      <div class="endpoint-side">
        ${attemptsChart(view.hourly)} ${recoveries} ${view.canAct && endpointActions(view)}
      </div>
    </div>
    ${deliveriesLedger(view)}`;
}

/**
 * The event types a test of this endpoint may send: its filters in order, a family wildcard
 * ("capability.*") expanded to the catalog's subscribable types of that family, an exact type kept
 * if the catalog lists it as subscribable; each once. The picker offers these, the first selected.
 */
export function subscribedTypes(filters: readonly string[], catalog: readonly EventType[]): string[] {
  const subscribable = catalog.filter((type) => type.subscribable).map((type) => type.type);
  const chosen = filters.flatMap((filter) =>
    filter.endsWith(".*")
      ? subscribable.filter((type) => type.startsWith(filter.slice(0, -1)))
      : subscribable.includes(filter)
        ? [filter]
        : [],
  );
  return [...new Set(chosen)];
}

/** Delete, step 1: what deleting does, and the form (carrying the version shown) that confirms it. */
export function deleteConfirmation(csrfToken: string, endpoint: Endpoint): SafeHtml {
  const self = endpointPath(endpoint.id);
  return html`<section aria-labelledby="delete-heading" id="delete" class="card danger-zone">
    <h2 id="delete-heading">Delete ${endpoint.description}?</h2>
    <dl>
      <dt>URL</dt>
      <dd id="delete-url">${endpoint.url}</dd>
      <dt>Event filters</dt>
      <dd>${endpoint.eventTypes.map((type) => html`<code>${type}</code> `)}</dd>
    </dl>
    <p>
      The endpoint receives no more events from the moment it is deleted, and its pending retries stop. It then no
      longer shows in the console or the API, nor do its deliveries in the message log. This cannot be undone: to
      receive events at this URL again, add a new endpoint (with a new signing secret).
    </p>
    <form method="post" action="${self}/delete" id="delete-form" class="actions">
      ${csrfField(csrfToken)} ${idempotencyField()} ${versionField(endpoint.version)}
      <button type="submit" class="danger">Delete the endpoint</button>
      <a href="${self}">Cancel</a>
    </form>
  </section>`;
}

/** The answer to an action on a stale version without a form to show again (pause, resume, rotate). */
export function conflictNotice(endpointId: string): SafeHtml {
  return html`<p role="alert" id="conflict">
      Someone changed this endpoint after you opened the page, so nothing was done. Review its current state and try
      again.
    </p>
    <p><a href="${endpointPath(endpointId)}">Back to the endpoint</a></p>`;
}

export function rotateForm(csrfToken: string, endpoint: Endpoint, error?: string): SafeHtml {
  return html`<p>
      A new signing secret replaces the current one. For 24 hours deliveries carry a second signature made with the
      current secret, so receivers can switch over. Enter your password to confirm it is you.
    </p>
    ${error && html`<p class="flash error" role="alert" id="form-error">${error}</p>`}
    <form class="stacked" method="post" action="${endpointPath(endpoint.id)}/rotate-secret" id="rotate-form">
      ${csrfField(csrfToken)} ${idempotencyField()} ${versionField(endpoint.version)}
      <label for="password">Your password</label>
      <input id="password" name="password" type="password" required autocomplete="current-password" />
      <button type="submit" class="danger">Rotate the secret</button>
    </form>
    <p><a href="${endpointPath(endpoint.id)}">Cancel</a></p>`;
}
