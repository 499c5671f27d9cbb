import type { Delivery, Endpoint, EventType } from "@platform/proto/webhooks/v1";
import { html, type SafeHtml } from "../html.js";
import { time } from "../layout.js";
import { deliveryPath, endpointPath, eventTypeSelect, statusBadge, statusSelect } from "./webhooks.js";

/**
 * The markup of the message log (its handler is pages/webhook-messages.ts): every delivery of the
 * tenant's endpoints, newest first, searched by event id and type, filtered by status and by a
 * creation window, paged with the service's cursor.
 */

export const MESSAGE_LOG = "/console/webhooks/messages";

/** The message log's filters as the form holds them ("" when absent); `from` and `to` are UTC datetime-local. */
export interface MessageLogFilters {
  eventId: string;
  eventType: string;
  status: string;
  from: string;
  to: string;
}

export interface MessageLogView {
  filters: MessageLogFilters;
  /** A filter the user can fix (a bad time, a window the wrong way round), shown above the form. */
  error?: string;
  catalog: EventType[];
  /** The tenant's endpoints by id, to name each delivery's endpoint (a missing one shows its id). */
  endpoints: ReadonlyMap<string, Endpoint>;
  deliveries: Delivery[];
  /** Whether any filter is set (the page offers to clear them). */
  filtered: boolean;
  /** The next page's link, "" when there is none. */
  next: string;
}

function filterForm(view: MessageLogView): SafeHtml {
  const { filters } = view;
  return html`<form method="get" action="${MESSAGE_LOG}" id="message-filters" class="filters" role="search">
    <div class="field">
      <label for="log-event-id">Event id</label>
      <input id="log-event-id" name="eventId" value="${filters.eventId}" maxlength="200" spellcheck="false" />
    </div>
    <div class="field">
      <label for="log-event-type">Event type</label>
      ${eventTypeSelect("log-event-type", view.catalog, filters.eventType)}
    </div>
    <div class="field">
      <label for="log-status">Status</label>
      ${statusSelect("log-status", filters.status)}
    </div>
    <div class="field">
      <label for="log-from">Created from (UTC)</label>
      <input id="log-from" name="from" type="datetime-local" value="${filters.from}" />
    </div>
    <div class="field">
      <label for="log-to">Created before (UTC)</label>
      <input id="log-to" name="to" type="datetime-local" value="${filters.to}" />
    </div>
    <div class="field buttons">
      <button type="submit" class="primary">Search</button>
      ${view.filtered && html`<a href="${MESSAGE_LOG}" id="clear-filters">Clear filters</a>`}
    </div>
  </form>`;
}

function endpointCell(delivery: Delivery, endpoints: ReadonlyMap<string, Endpoint>): SafeHtml {
  const endpoint = endpoints.get(delivery.endpointId);
  return html`<a href="${endpointPath(delivery.endpointId)}" class="endpoint-name"
    >${endpoint ? endpoint.description || endpoint.url : delivery.endpointId}</a
  >`;
}

function messageRow(delivery: Delivery, endpoints: ReadonlyMap<string, Endpoint>): SafeHtml {
  return html`<tr data-delivery-id="${delivery.id}" data-endpoint-id="${delivery.endpointId}">
    <td data-label="Event">
      <a href="${deliveryPath(delivery.endpointId, delivery.id)}" class="id">${delivery.eventId}</a>
      ${delivery.livemode ? "" : html`<span class="tag">test</span>`}
    </td>
    <td data-label="Event type"><code>${delivery.eventType}</code></td>
    <td data-label="Endpoint">${endpointCell(delivery, endpoints)}</td>
    <td data-label="Status">${statusBadge(delivery.status)}</td>
    <td data-label="Attempts" class="number">${delivery.attemptsTotal}</td>
    <td data-label="Created">${time(delivery.createdAt)}</td>
  </tr>`;
}

/** The message log page: the search form, the deliveries (or that none match), the next page. */
export function messageLog(view: MessageLogView): SafeHtml {
  return html`<p class="lead">
      Every event sent to your endpoints, newest first. Open one to see its payload and every attempt, or to resend it.
    </p>
    ${view.error && html`<p class="flash error" role="alert" id="form-error">${view.error}</p>`} ${filterForm(view)}
    ${
      view.deliveries.length === 0
        ? html`<p id="no-messages" class="empty">No messages${view.filtered ? " match these filters" : " yet"}.</p>`
        : html`<div class="table-fit">
            <table id="messages" class="responsive">
              <caption>
                Messages, newest first
              </caption>
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Event type</th>
                  <th scope="col">Endpoint</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                ${view.deliveries.map((delivery) => messageRow(delivery, view.endpoints))}
              </tbody>
            </table>
          </div>`
    }
    ${view.next && html`<p class="pager"><a href="${view.next}" rel="next" id="messages-next">Next page</a></p>`}`;
}
