import type { Endpoint, EventType } from "@platform/proto/webhooks/v1";
import { html, raw, type SafeHtml } from "../html.js";
import { time } from "../layout.js";

/**
 * The markup the console's webhook pages (views/webhook-*.ts) share: their paths, the hidden
 * version of a form, the endpoint's health and attention, the event filters and the delivery
 * statuses.
 */

/** The hidden `expectedVersion` of a form: the version the page showed. */
export const versionField = (version: string): SafeHtml =>
  html`<input type="hidden" name="expectedVersion" value="${version}" />`;

export const endpointPath = (endpointId: string): string => `/console/webhooks/${encodeURIComponent(endpointId)}`;
export const deliveryPath = (endpointId: string, deliveryId: string): string =>
  `${endpointPath(endpointId)}/deliveries/${encodeURIComponent(deliveryId)}`;
export const recoveryPath = (endpointId: string, recoveryId: string): string =>
  `${endpointPath(endpointId)}/recoveries/${encodeURIComponent(recoveryId)}`;

/** The 24 h success rate as a percentage with one decimal, or "no attempts". */
export function successRateText(rate: number | undefined, attempts: string | number): string {
  if (rate === undefined || Number(attempts) === 0) return "no attempts";
  return `${(Math.floor(rate * 1000) / 10).toFixed(1)}% of ${attempts}`;
}

const HEALTH_TEXT: Record<string, string> = {
  healthy: "Healthy",
  degraded: "Degraded",
  failing: "Failing",
  paused: "Paused",
};

export const healthBadge = (health: string): SafeHtml =>
  html`<span class="health health-${health}" data-health="${health}">${HEALTH_TEXT[health] ?? health}</span>`;

const ATTENTION_TEXT: Record<string, string> = {
  "webhook.endpoint_dead_lettered": "A delivery failed every attempt; the endpoint was paused.",
};

const CAUSE_TEXT: Record<string, string> = {
  timeout: "the receiver did not answer in time",
  tls: "the TLS handshake failed",
  refused_target: "the URL resolves to an address deliveries may not reach",
  connection: "the connection failed",
  http_3xx: "the receiver answered with a redirect (never followed)",
  http_4xx: "the receiver answered 4xx",
  http_5xx: "the receiver answered 5xx",
  http_other: "the receiver answered with a status that is not a success",
};

/** The needing-attention flag with its cause and since when, or nothing. */
export function attentionNote(endpoint: Endpoint): SafeHtml | false {
  if (!endpoint.attentionReason) return false;
  const cause = endpoint.attentionCause;
  return html`<span class="attention" data-attention="${endpoint.attentionReason}"
    ><strong>Needs attention:</strong> ${ATTENTION_TEXT[endpoint.attentionReason] ?? endpoint.attentionReason}
    ${cause && html`<span data-cause="${cause}">Cause: ${CAUSE_TEXT[cause] ?? cause} (<code>${cause}</code>).</span>`}
    ${endpoint.attentionSince && html`Since ${time(endpoint.attentionSince)}.`}</span
  >`;
}

/** The subscribable event types and their families' wildcards, as the create and edit forms offer them. */
export function eventTypeChoices(catalog: readonly EventType[]): string[] {
  const types = catalog.filter((type) => type.subscribable).map((type) => type.type);
  const families = [...new Set(types.map((type) => `${type.split(".")[0]}.*`))];
  return [...families, ...types];
}

/** The checkbox fieldset of event filters. */
export function eventTypeFieldset(choices: readonly string[], selected: readonly string[]): SafeHtml {
  return html`<fieldset id="event-types">
    <legend>Event filters (at least one)</legend>
    ${choices.map((type, index) => {
      const id = `event-type-${index}`;
      return html`<div class="choice">
        <input
          type="checkbox"
          id="${id}"
          name="eventTypes"
          value="${type}"
          ${selected.includes(type) && raw("checked")}
        />
        <label for="${id}">${type}</label>
      </div>`;
    })}
  </fieldset>`;
}

/** A delivery status as people read it. */
export const STATUS_TEXT: Record<string, string> = {
  pending: "Pending",
  succeeded: "Succeeded",
  awaiting_retry: "Awaiting retry",
  dead_lettered: "Dead-lettered",
  held: "Held (endpoint paused)",
};

export const statusBadge = (status: string): SafeHtml =>
  html`<span class="status status-${status}" data-status="${status}">${STATUS_TEXT[status] ?? status}</span>`;

/** A filter's status select (any, or one delivery status), `selected` the filter's value. */
export function statusSelect(id: string, selected: string): SafeHtml {
  return html`<select id="${id}" name="status">
    <option value="">Any</option>
    ${Object.entries(STATUS_TEXT).map(
      ([value, text]) => html`<option value="${value}" ${selected === value && html`selected`}>${text}</option>`,
    )}
  </select>`;
}

/** A filter's event type select (any, or one type of the catalog), `selected` the filter's value. */
export function eventTypeSelect(id: string, catalog: EventType[], selected: string): SafeHtml {
  return html`<select id="${id}" name="eventType">
    <option value="">Any</option>
    ${catalog.map(
      (type) => html`<option value="${type.type}" ${selected === type.type && html`selected`}>${type.type}</option>`,
    )}
  </select>`;
}
