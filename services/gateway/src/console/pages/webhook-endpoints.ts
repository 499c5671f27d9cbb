import type { Context } from "koa";
import type { Endpoint, EventType } from "@platform/proto/webhooks/v1";
import { roleReaches, type ConsoleViewer } from "../../domain/console-role.js";
import { ApiError, callService } from "../../http/api-error.js";
import { deliveryChart } from "../delivery-chart.js";
import { html, type SafeHtml } from "../html.js";
import { csrfField, idempotencyField, time } from "../layout.js";
import { checkPassword } from "../password-check.js";
import {
  formIdempotencyKey,
  page,
  redirect,
  type ConsoleDeps,
  type SignedInConsoleRoute,
  type SignedInRequest,
} from "../route.js";
import {
  attentionNote,
  deliveryPath,
  endpointPath,
  eventTypeChoices,
  eventTypeFieldset,
  expectedVersionFrom,
  healthBadge,
  isFormRefusal,
  isVersionMismatch,
  STATUS_TEXT,
  statusBadge,
  successRateText,
  versionField,
} from "../webhook-views.js";

/**
 * The console's webhook endpoint pages (issue 18): the list with health, the 24 h success rate
 * and the needing-attention flag; an endpoint with its settings, the hourly chart and the
 * deliveries ledger (filters in the URL); and the endpoint actions (create, edit, pause, resume,
 * rotate the secret, send a test event). Every call is the API's gRPC call with the user as actor.
 */

const LIST = "/console/webhooks";

const canAct = (viewer: ConsoleViewer) => roleReaches(viewer.role, "admin");

/** A query parameter as one string ("" when absent or repeated). */
const queryText = (ctx: Context, name: string): string => {
  const value = ctx.query[name];
  return typeof value === "string" ? value.trim() : "";
};

const eventCatalog = async (deps: ConsoleDeps, call: SignedInRequest["call"]): Promise<EventType[]> =>
  (await callService(deps.webhooks.listEventTypes({}, call))).eventTypes;

function endpointRow(endpoint: Endpoint): SafeHtml {
  return html`<tr data-endpoint-id="${endpoint.id}">
    <td><a href="${endpointPath(endpoint.id)}">${endpoint.url}</a></td>
    <td>${endpoint.description}</td>
    <td>${healthBadge(endpoint.health)}</td>
    <td data-success-rate="${endpoint.successRate24h ?? ""}">
      ${successRateText(endpoint.successRate24h, endpoint.attempts24h)}
    </td>
    <td>${attentionNote(endpoint) || "—"}</td>
  </tr>`;
}

/** The create and edit form's fields. */
interface EndpointFormValues {
  url: string;
  description: string;
  eventTypes: string[];
}

function endpointForm(
  request: SignedInRequest,
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
      ${csrfField(request.csrfToken)} ${idempotencyField()} ${options.version && versionField(options.version)}
      <label for="url">URL (https)</label>
      <input id="url" name="url" type="url" required value="${options.values.url}" />
      <label for="description">Description</label>
      <input id="description" name="description" required maxlength="500" value="${options.values.description}" />
      ${eventTypeFieldset(options.choices, options.values.eventTypes)}
      <button type="submit">${options.submit}</button>
    </form>`;
}

const valuesFrom = (request: SignedInRequest): EndpointFormValues => ({
  url: request.form.get("url").trim(),
  description: request.form.get("description"),
  eventTypes: request.form.all("eventTypes"),
});

/** The page that shows a secret, once: after create and after rotate (never on a replay). */
function secretShown(endpointId: string, secret: string, what: string): SafeHtml {
  return html`<section aria-labelledby="secret-heading" id="secret">
    <h2 id="secret-heading">Signing secret</h2>
    <p>${what} Copy it now: it is shown only this once and cannot be read again.</p>
    <pre><code id="new-secret">${secret}</code></pre>
    <button type="button" data-copy="new-secret" hidden>Copy the secret</button>
    <p><a href="${endpointPath(endpointId)}">Go to the endpoint</a></p>
  </section>`;
}

function replayedNotice(endpointId: string, what: string): SafeHtml {
  return html`<p role="status" id="replayed">
      ${what} was already done by this same form; its secret was shown only once, then. If it was not saved, rotate the
      secret again.
    </p>
    <p><a href="${endpointPath(endpointId)}">Go to the endpoint</a></p>`;
}

async function listPage({ ctx, viewer, call }: SignedInRequest, deps: ConsoleDeps) {
  const cursor = queryText(ctx, "cursor");
  const answer = await callService(deps.webhooks.listEndpoints({ tenantId: viewer.tenantId, limit: 50, cursor }, call));
  const next = answer.nextCursor && `${LIST}?${new URLSearchParams({ cursor: answer.nextCursor }).toString()}`;
  return page(
    "Webhooks",
    html`${canAct(viewer) && html`<p><a href="/console/webhooks/new" id="new-endpoint">Add an endpoint</a></p>`}
    ${
      answer.endpoints.length === 0
        ? html`<p id="no-endpoints">No webhook endpoints yet.</p>`
        : html`<div class="table-scroll" tabindex="0" role="region" aria-label="Endpoints">
            <table id="endpoints">
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
                ${answer.endpoints.map(endpointRow)}
              </tbody>
            </table>
          </div>`
    }
    ${next && html`<p><a href="${next}" rel="next">Next page</a></p>`}`,
  );
}

async function newEndpointPage(request: SignedInRequest, deps: ConsoleDeps) {
  const choices = eventTypeChoices(await eventCatalog(deps, request.call));
  return page(
    "Add a webhook endpoint",
    endpointForm(request, {
      action: LIST,
      submit: "Create the endpoint",
      values: { url: "", description: "", eventTypes: [] },
      choices,
    }),
  );
}

async function createEndpoint(request: SignedInRequest, deps: ConsoleDeps) {
  const { viewer, call, form } = request;
  const idempotencyKey = formIdempotencyKey(form);
  const values = valuesFrom(request);
  let answer;
  try {
    answer = await callService(
      deps.webhooks.createEndpoint({ tenantId: viewer.tenantId, ...values, idempotencyKey, actor: call.actor }, call),
      { idempotencyKey, howToCheck: "The endpoint may have been created: list the endpoints" },
    );
  } catch (error) {
    if (!isFormRefusal(error)) throw error;
    const choices = eventTypeChoices(await eventCatalog(deps, call));
    return page(
      "Add a webhook endpoint",
      endpointForm(request, { action: LIST, submit: "Create the endpoint", values, choices, error: error.message }),
      { status: 400 },
    );
  }
  const id = answer.endpoint!.id;
  return page(
    "Endpoint created",
    answer.replayed
      ? replayedNotice(id, "Creating this endpoint")
      : secretShown(id, answer.secret, `The endpoint ${answer.endpoint!.url} is created.`),
  );
}

const LEDGER_PAGE = 25;
const RECENT_RECOVERIES = 5;

async function endpointPage(request: SignedInRequest, deps: ConsoleDeps) {
  const { ctx, viewer, call } = request;
  const endpointId = request.param("endpointId");
  const filters = {
    status: queryText(ctx, "status"),
    eventType: queryText(ctx, "eventType"),
    eventId: queryText(ctx, "eventId"),
  };
  const cursor = queryText(ctx, "cursor");
  const tenantId = viewer.tenantId;
  const [{ endpoint }, stats, ledger, catalog, { recoveries }] = await Promise.all([
    callService(deps.webhooks.getEndpoint({ tenantId, endpointId }, call)),
    callService(deps.webhooks.getEndpointStats({ tenantId, endpointId }, call)),
    callService(deps.webhooks.listDeliveries({ tenantId, endpointId, limit: LEDGER_PAGE, cursor, ...filters }, call)),
    eventCatalog(deps, call),
    callService(deps.webhooks.listRecoveries({ tenantId, endpointId, limit: RECENT_RECOVERIES }, call)),
  ]);
  const e = endpoint!;
  const self = endpointPath(e.id);
  const filterQuery = Object.entries(filters).filter(([, value]) => value !== "");
  const next =
    ledger.nextCursor &&
    `${self}?${new URLSearchParams([...filterQuery, ["cursor", ledger.nextCursor]]).toString()}#deliveries`;
  const act = canAct(viewer);
  const subscribable = catalog.filter((type) => type.subscribable).map((type) => type.type);
  const dayAgo = new Date(Date.now() - 24 * 3_600_000).toISOString().slice(0, 16);

  const settings = html`<section aria-labelledby="settings-heading" id="settings">
    <h2 id="settings-heading">Settings</h2>
    <dl>
      <dt>URL</dt>
      <dd id="endpoint-url">${e.url}</dd>
      <dt>Description</dt>
      <dd id="endpoint-description">${e.description}</dd>
      <dt>Event filters</dt>
      <dd id="endpoint-event-types">${e.eventTypes.map((type) => html`<code>${type}</code> `)}</dd>
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
      act &&
      html`<div class="actions">
        <a href="${self}/edit" id="edit-endpoint">Edit settings</a>
        <form
          method="post"
          action="${self}/${e.paused ? "resume" : "pause"}"
          id="${e.paused ? "resume" : "pause"}-form"
        >
          ${csrfField(request.csrfToken)} ${idempotencyField()} ${versionField(e.version)}
          <button type="submit">${e.paused ? "Resume the endpoint" : "Pause the endpoint"}</button>
        </form>
        <a href="${self}/rotate-secret" id="rotate-secret">Rotate the signing secret</a>
      </div>`
    }
  </section>`;

  const actions =
    act &&
    html`<section aria-labelledby="test-heading" id="test">
        <h2 id="test-heading">Send a test event</h2>
        <form class="stacked" method="post" action="${self}/test" id="test-form">
          ${csrfField(request.csrfToken)} ${idempotencyField()}
          <label for="test-event-type">Event type</label>
          <select id="test-event-type" name="eventType" required>
            ${subscribable.map((type) => html`<option value="${type}">${type}</option>`)}
          </select>
          <button type="submit">Send the test event</button>
        </form>
      </section>
      <section aria-labelledby="recover-heading" id="recover">
        <h2 id="recover-heading">Recover failed deliveries</h2>
        <p>
          Redeliver every failed or dead-lettered delivery created since a time. You will see how many first, then
          confirm.
        </p>
        <form class="stacked" method="post" action="${self}/recover/preview" id="recover-form">
          ${csrfField(request.csrfToken)} ${idempotencyField()}
          <label for="recover-since">Since (UTC)</label>
          <input id="recover-since" name="since" type="datetime-local" required value="${dayAgo}" />
          <button type="submit">Count the deliveries to recover</button>
        </form>
      </section>`;

  const recoveriesSection =
    recoveries.length > 0 &&
    html`<section aria-labelledby="recoveries-heading" id="recoveries">
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

  const ledgerSection = html`<section aria-labelledby="deliveries-heading" id="deliveries">
    <h2 id="deliveries-heading">Deliveries</h2>
    <form method="get" action="${self}" id="ledger-filters" class="filters">
      <label for="filter-status">Status</label>
      <select id="filter-status" name="status">
        <option value="">Any</option>
        ${Object.entries(STATUS_TEXT).map(
          ([value, text]) =>
            html`<option value="${value}" ${filters.status === value && html`selected`}>${text}</option>`,
        )}
      </select>
      <label for="filter-event-type">Event type</label>
      <select id="filter-event-type" name="eventType">
        <option value="">Any</option>
        ${catalog.map(
          (type) =>
            html`<option value="${type.type}" ${filters.eventType === type.type && html`selected`}>
              ${type.type}
            </option>`,
        )}
      </select>
      <label for="filter-event-id">Event id</label>
      <input id="filter-event-id" name="eventId" value="${filters.eventId}" />
      <button type="submit">Filter</button>
      ${filterQuery.length > 0 && html`<a href="${self}#deliveries">Clear filters</a>`}
    </form>
    ${
      ledger.deliveries.length === 0
        ? html`<p id="no-deliveries">No deliveries${filterQuery.length > 0 ? " match these filters" : ""}.</p>`
        : html`<div class="table-scroll" tabindex="0" role="region" aria-labelledby="deliveries-heading">
            <table id="ledger">
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
                ${ledger.deliveries.map(
                  (d) =>
                    html`<tr data-delivery-id="${d.id}">
                      <td>
                        <a href="${deliveryPath(e.id, d.id)}">${d.id}</a>${d.livemode ? "" : html` <em>(test)</em>`}
                      </td>
                      <td>${d.eventType}</td>
                      <td><code>${d.eventId}</code></td>
                      <td>${statusBadge(d.status)}</td>
                      <td>${d.attemptsTotal}</td>
                      <td>${d.lastStatusCode ?? d.lastError ?? "—"}</td>
                      <td>${time(d.nextAttemptAt)}</td>
                      <td>${time(d.createdAt)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    ${next && html`<p><a href="${next}" rel="next" id="ledger-next">Next page</a></p>`}
  </section>`;

  return page(
    `Endpoint ${e.description}`,
    html`<p><a href="${LIST}">All endpoints</a></p>
      ${settings}
      <section aria-labelledby="chart-heading" id="chart">
        <h2 id="chart-heading">Attempts in the last 24 hours</h2>
        ${deliveryChart(
          stats.hourly.map((hour) => ({
            start: hour.start,
            succeeded: Number(hour.succeeded),
            failed: Number(hour.failed),
          })),
        )}
      </section>
      ${recoveriesSection} ${actions} ${ledgerSection}`,
  );
}

async function editPage(request: SignedInRequest, deps: ConsoleDeps) {
  const { viewer, call } = request;
  const endpointId = request.param("endpointId");
  const [{ endpoint }, catalog] = await Promise.all([
    callService(deps.webhooks.getEndpoint({ tenantId: viewer.tenantId, endpointId }, call)),
    eventCatalog(deps, call),
  ]);
  const e = endpoint!;
  return page(
    "Edit the endpoint",
    endpointForm(request, {
      action: `${endpointPath(e.id)}/edit`,
      submit: "Save the changes",
      values: { url: e.url, description: e.description, eventTypes: e.eventTypes },
      choices: [...new Set([...eventTypeChoices(catalog), ...e.eventTypes])],
      version: e.version,
    }),
  );
}

async function saveEdit(request: SignedInRequest, deps: ConsoleDeps) {
  const { viewer, call, form } = request;
  const endpointId = request.param("endpointId");
  const idempotencyKey = formIdempotencyKey(form);
  const expectedVersion = expectedVersionFrom(form);
  const values = valuesFrom(request);
  try {
    await callService(
      deps.webhooks.updateEndpoint(
        {
          tenantId: viewer.tenantId,
          endpointId,
          url: values.url,
          description: values.description,
          eventTypes: { eventTypes: values.eventTypes },
          expectedVersion,
          idempotencyKey,
          actor: call.actor,
        },
        call,
      ),
      { idempotencyKey, howToCheck: "The endpoint may have changed: read it" },
    );
  } catch (error) {
    if (!(error instanceof ApiError) || !(isVersionMismatch(error) || isFormRefusal(error))) throw error;
    const refusal = error;
    const [{ endpoint }, catalog] = await Promise.all([
      callService(deps.webhooks.getEndpoint({ tenantId: viewer.tenantId, endpointId }, call)),
      eventCatalog(deps, call),
    ]);
    const current = endpoint!;
    const conflict = refusal.options.code === "webhook.version_mismatch";
    const message = conflict
      ? `Someone changed this endpoint while you were editing it (it is now at version ${current.version}; ` +
        `you edited version ${expectedVersion ?? "?"}). Nothing was saved. The form now shows the current ` +
        "settings: make your change again and save."
      : refusal.message;
    return page(
      "Edit the endpoint",
      endpointForm(request, {
        action: `${endpointPath(current.id)}/edit`,
        submit: "Save the changes",
        // After a conflict: the current settings and version; after a refusal: what was entered.
        values: conflict
          ? { url: current.url, description: current.description, eventTypes: current.eventTypes }
          : values,
        choices: [...new Set([...eventTypeChoices(catalog), ...current.eventTypes, ...values.eventTypes])],
        version: conflict ? current.version : expectedVersion,
        error: message,
      }),
      { status: refusal.status },
    );
  }
  return redirect(endpointPath(endpointId), { kind: "success", text: "The endpoint's settings are saved." });
}

/** The page a stale version answers on an action without a form to show again (pause, resume, rotate). */
function conflictPage(endpointId: string) {
  return page(
    "The endpoint changed",
    html`<p role="alert" id="conflict">
        Someone changed this endpoint after you opened the page, so nothing was done. Review its current state and try
        again.
      </p>
      <p><a href="${endpointPath(endpointId)}">Back to the endpoint</a></p>`,
    { status: 412 },
  );
}

function pauseOrResume(action: "pause" | "resume"): SignedInConsoleRoute["handle"] {
  return async (request, deps) => {
    const { viewer, call, form } = request;
    const endpointId = request.param("endpointId");
    const idempotencyKey = formIdempotencyKey(form);
    const input = {
      tenantId: viewer.tenantId,
      endpointId,
      expectedVersion: expectedVersionFrom(form),
      idempotencyKey,
      actor: call.actor,
    };
    const retry = { idempotencyKey, howToCheck: `The endpoint may have been ${action}d: read it` };
    try {
      await callService(
        action === "pause" ? deps.webhooks.pauseEndpoint(input, call) : deps.webhooks.resumeEndpoint(input, call),
        retry,
      );
    } catch (error) {
      if (isVersionMismatch(error)) return conflictPage(endpointId);
      throw error;
    }
    return redirect(endpointPath(endpointId), {
      kind: "success",
      text: action === "pause" ? "The endpoint is paused: new deliveries are held." : "The endpoint is resumed.",
    });
  };
}

function rotateForm(request: SignedInRequest, endpoint: Endpoint, error?: string): SafeHtml {
  return html`<p>
      A new signing secret replaces the current one. For 24 hours deliveries carry a second signature made with the
      current secret, so receivers can switch over. Enter your password to confirm it is you.
    </p>
    ${error && html`<p class="flash error" role="alert" id="form-error">${error}</p>`}
    <form class="stacked" method="post" action="${endpointPath(endpoint.id)}/rotate-secret" id="rotate-form">
      ${csrfField(request.csrfToken)} ${idempotencyField()} ${versionField(endpoint.version)}
      <label for="password">Your password</label>
      <input id="password" name="password" type="password" required autocomplete="current-password" />
      <button type="submit" class="danger">Rotate the secret</button>
    </form>
    <p><a href="${endpointPath(endpoint.id)}">Cancel</a></p>`;
}

async function rotatePage(request: SignedInRequest, deps: ConsoleDeps) {
  const { endpoint } = await callService(
    deps.webhooks.getEndpoint(
      { tenantId: request.viewer.tenantId, endpointId: request.param("endpointId") },
      request.call,
    ),
  );
  return page("Rotate the signing secret", rotateForm(request, endpoint!));
}

/**
 * Rotation asks for the password again: `checkPassword`, the sign-in's own rule (its argon2
 * verification and its throttle, the same account and address keys), so it is no way around it.
 */
async function rotateSecret(request: SignedInRequest, deps: ConsoleDeps) {
  const { ctx, viewer, call, form } = request;
  const endpointId = request.param("endpointId");
  const idempotencyKey = formIdempotencyKey(form);
  const expectedVersion = expectedVersionFrom(form);
  const reask = async (status: number, error: string, headers: Record<string, string> = {}) => {
    const { endpoint } = await callService(deps.webhooks.getEndpoint({ tenantId: viewer.tenantId, endpointId }, call));
    return page("Rotate the signing secret", rotateForm(request, endpoint!, error), { status, headers });
  };
  const check = await checkPassword(deps, {
    tenantId: viewer.tenantId,
    email: viewer.email,
    address: ctx.ip,
    password: form.get("password"),
    userId: viewer.userId,
  });
  if (check.outcome === "throttled") {
    return reask(429, `Too many password attempts. Try again in ${check.minutesLeft} minute(s).`, check.headers);
  }
  if (check.outcome === "refused") return reask(400, "The password is wrong. The secret was not rotated.");
  let answer;
  try {
    answer = await callService(
      deps.webhooks.rotateSecret(
        { tenantId: viewer.tenantId, endpointId, expectedVersion, idempotencyKey, actor: call.actor },
        call,
      ),
      { idempotencyKey, howToCheck: "The secret may have been rotated" },
    );
  } catch (error) {
    if (isVersionMismatch(error)) return conflictPage(endpointId);
    throw error;
  }
  return page(
    "Secret rotated",
    answer.replayed
      ? replayedNotice(endpointId, "This rotation")
      : secretShown(endpointId, answer.secret, "The endpoint signs with this new secret from now on."),
  );
}

/** How long the test action waits for the receiver's first answer before showing the delivery anyway. */
const TEST_ANSWER_WAIT_MS = 3_000;

async function sendTest(request: SignedInRequest, deps: ConsoleDeps) {
  const { viewer, call, form } = request;
  const endpointId = request.param("endpointId");
  const idempotencyKey = formIdempotencyKey(form);
  const answer = await callService(
    deps.webhooks.sendTestDelivery(
      { tenantId: viewer.tenantId, endpointId, eventType: form.get("eventType"), idempotencyKey, actor: call.actor },
      call,
    ),
    { idempotencyKey, howToCheck: "The test delivery may have been created: list the deliveries" },
  );
  const deliveryId = answer.delivery!.id;
  // The receiver usually answers within moments: wait a little so the next page shows its answer.
  const deadline = Date.now() + TEST_ANSWER_WAIT_MS;
  while (Date.now() < deadline) {
    const { attempts } = await callService(
      deps.webhooks.getDelivery({ tenantId: viewer.tenantId, endpointId, deliveryId }, call),
    );
    if (attempts.length > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return redirect(deliveryPath(endpointId, deliveryId), { kind: "success", text: "The test event was sent." });
}

/** The webhook endpoint pages and actions. */
export const webhookEndpointRoutes: SignedInConsoleRoute[] = [
  {
    method: "GET",
    path: LIST,
    role: "viewer",
    summary: "The tenant's webhook endpoints: health, 24 h success rate, needing attention and why.",
    handle: listPage,
  },
  {
    method: "GET",
    path: "/console/webhooks/new",
    role: "admin",
    summary: "The form to add an endpoint (URL, description, event filters from the catalog).",
    handle: newEndpointPage,
  },
  {
    method: "POST",
    path: LIST,
    role: "admin",
    summary: "Creates an endpoint and shows its signing secret once.",
    handle: createEndpoint,
  },
  {
    method: "GET",
    path: "/console/webhooks/:endpointId",
    role: "viewer",
    summary: "An endpoint: settings, attempts per hour over 24 h, the deliveries ledger filtered by the URL's query.",
    handle: endpointPage,
  },
  {
    method: "GET",
    path: "/console/webhooks/:endpointId/edit",
    role: "admin",
    summary: "The form to change an endpoint, carrying the version it showed.",
    handle: editPage,
  },
  {
    method: "POST",
    path: "/console/webhooks/:endpointId/edit",
    role: "admin",
    summary:
      "Saves an endpoint's settings if it is still at the version the form showed (else 412 and the form again).",
    handle: saveEdit,
  },
  {
    method: "POST",
    path: "/console/webhooks/:endpointId/pause",
    role: "admin",
    summary: "Pauses an endpoint.",
    handle: pauseOrResume("pause"),
  },
  {
    method: "POST",
    path: "/console/webhooks/:endpointId/resume",
    role: "admin",
    summary: "Resumes an endpoint, releasing its held deliveries.",
    handle: pauseOrResume("resume"),
  },
  {
    method: "GET",
    path: "/console/webhooks/:endpointId/rotate-secret",
    role: "admin",
    summary: "Asks for the password before rotating the signing secret.",
    handle: rotatePage,
  },
  {
    method: "POST",
    path: "/console/webhooks/:endpointId/rotate-secret",
    role: "admin",
    summary: "Rotates the signing secret after checking the password (throttled as sign-in); shows it once.",
    handle: rotateSecret,
  },
  {
    method: "POST",
    path: "/console/webhooks/:endpointId/test",
    role: "admin",
    summary: "Sends a test event of a type from the catalog and shows the delivery with the receiver's answer.",
    handle: sendTest,
  },
];
