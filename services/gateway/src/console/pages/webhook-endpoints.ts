import type { Context } from "koa";
import type { EventType } from "@platform/proto/webhooks/v1";
import { roleReaches, type ConsoleViewer } from "../../domain/console-role.js";
import { ApiError, callService } from "../../http/api-error.js";
import {
  formIdempotencyKey,
  page,
  redirect,
  type ConsoleDeps,
  type SignedInConsoleRoute,
  type SignedInRequest,
} from "../route.js";
import {
  endpointDetail,
  endpointForm,
  endpointList,
  ENDPOINT_LIST,
  replayedNotice,
  secretShown,
  type EndpointFormValues,
  type LedgerFilters,
} from "../views/webhook-endpoints.js";
import { deliveryPath, endpointPath, eventTypeChoices } from "../views/webhooks.js";
import {
  expectedVersionFrom,
  isFormRefusal,
  isVersionMismatch,
  rateLimitFrom,
  versionConflictPage,
} from "../webhook-forms.js";

/**
 * The console's webhook endpoint pages (issue 18): the list with health, the 24 h success rate
 * and the needing-attention flag; an endpoint with its settings, the hourly chart and the
 * deliveries ledger (filters in the URL); and the endpoint actions (create, edit, pause, resume,
 * send a test event; rotating the secret is pages/webhook-secret.ts). Every call is the API's gRPC
 * call with the user as actor.
 * The markup is views/webhook-endpoints.ts; this file reads requests, calls and answers.
 */

const canAct = (viewer: ConsoleViewer) => roleReaches(viewer.role, "admin");

/** A query parameter as one string ("" when absent or repeated). */
const queryText = (ctx: Context, name: string): string => {
  const value = ctx.query[name];
  return typeof value === "string" ? value.trim() : "";
};

const eventCatalog = async (deps: ConsoleDeps, call: SignedInRequest["call"]): Promise<EventType[]> =>
  (await callService(deps.webhooks.listEventTypes({}, call))).eventTypes;

const valuesFrom = (request: SignedInRequest): EndpointFormValues => ({
  url: request.form.get("url").trim(),
  description: request.form.get("description"),
  eventTypes: request.form.all("eventTypes"),
  rateLimit: request.form.get("rateLimit"),
});

async function listPage({ ctx, viewer, call }: SignedInRequest, deps: ConsoleDeps) {
  const cursor = queryText(ctx, "cursor");
  const answer = await callService(deps.webhooks.listEndpoints({ tenantId: viewer.tenantId, limit: 50, cursor }, call));
  const next = answer.nextCursor && `${ENDPOINT_LIST}?${new URLSearchParams({ cursor: answer.nextCursor }).toString()}`;
  return page("Webhooks", endpointList({ endpoints: answer.endpoints, canAct: canAct(viewer), next }));
}

async function newEndpointPage(request: SignedInRequest, deps: ConsoleDeps) {
  const choices = eventTypeChoices(await eventCatalog(deps, request.call));
  return page(
    "Add a webhook endpoint",
    endpointForm(request.csrfToken, {
      action: ENDPOINT_LIST,
      submit: "Create the endpoint",
      values: { url: "", description: "", eventTypes: [], rateLimit: "" },
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
    const rateLimit = rateLimitFrom(values.rateLimit) ?? undefined;
    answer = await callService(
      deps.webhooks.createEndpoint(
        { tenantId: viewer.tenantId, ...values, rateLimit, idempotencyKey, actor: call.actor },
        call,
      ),
      { idempotencyKey, howToCheck: "The endpoint may have been created: list the endpoints" },
    );
  } catch (error) {
    if (!isFormRefusal(error)) throw error;
    const choices = eventTypeChoices(await eventCatalog(deps, call));
    return page(
      "Add a webhook endpoint",
      endpointForm(request.csrfToken, {
        action: ENDPOINT_LIST,
        submit: "Create the endpoint",
        values,
        choices,
        error: error.message,
      }),
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

/** The ledger's filters from the URL's query, and the query's pairs that filter (for the next page's link). */
function ledgerFiltersFrom(ctx: Context): { filters: LedgerFilters; filterQuery: [string, string][] } {
  const filters = {
    status: queryText(ctx, "status"),
    eventType: queryText(ctx, "eventType"),
    eventId: queryText(ctx, "eventId"),
  };
  return { filters, filterQuery: Object.entries(filters).filter(([, value]) => value !== "") };
}

async function endpointPage(request: SignedInRequest, deps: ConsoleDeps) {
  const { ctx, viewer, call } = request;
  const endpointId = request.param("endpointId");
  const { filters, filterQuery } = ledgerFiltersFrom(ctx);
  const cursor = queryText(ctx, "cursor");
  const tenantId = viewer.tenantId;
  const [{ endpoint }, stats, ledger, catalog, { recoveries }] = await Promise.all([
    callService(deps.webhooks.getEndpoint({ tenantId, endpointId }, call)),
    callService(deps.webhooks.getEndpointStats({ tenantId, endpointId }, call)),
    callService(
      deps.webhooks.listDeliveries(
        { tenantId, endpointId, limit: LEDGER_PAGE, cursor, ...filters, createdAfter: "", createdBefore: "" },
        call,
      ),
    ),
    eventCatalog(deps, call),
    callService(deps.webhooks.listRecoveries({ tenantId, endpointId, limit: RECENT_RECOVERIES }, call)),
  ]);
  const e = endpoint!;
  const next =
    ledger.nextCursor &&
    `${endpointPath(e.id)}?${new URLSearchParams([...filterQuery, ["cursor", ledger.nextCursor]]).toString()}#deliveries`;
  return page(
    `Endpoint ${e.description}`,
    endpointDetail({
      endpoint: e,
      canAct: canAct(viewer),
      csrfToken: request.csrfToken,
      hourly: stats.hourly,
      recoveries,
      catalog,
      filters,
      filtered: filterQuery.length > 0,
      deliveries: ledger.deliveries,
      next,
      recoverSince: new Date(Date.now() - 24 * 3_600_000).toISOString().slice(0, 16),
    }),
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
    endpointForm(request.csrfToken, {
      action: `${endpointPath(e.id)}/edit`,
      submit: "Save the changes",
      values: {
        url: e.url,
        description: e.description,
        eventTypes: e.eventTypes,
        rateLimit: String(e.rateLimit ?? ""),
      },
      choices: [...new Set([...eventTypeChoices(catalog), ...e.eventTypes])],
      version: e.version,
    }),
  );
}

/** The edit form again after a refusal: the current settings after a conflict, else what was entered. */
async function editRefused(
  request: SignedInRequest,
  deps: ConsoleDeps,
  refusal: ApiError,
  entered: { expectedVersion: string | undefined; values: EndpointFormValues },
) {
  const { viewer, call } = request;
  const endpointId = request.param("endpointId");
  const { expectedVersion, values } = entered;
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
    endpointForm(request.csrfToken, {
      action: `${endpointPath(current.id)}/edit`,
      submit: "Save the changes",
      values: conflict
        ? {
            url: current.url,
            description: current.description,
            eventTypes: current.eventTypes,
            rateLimit: String(current.rateLimit ?? ""),
          }
        : values,
      choices: [...new Set([...eventTypeChoices(catalog), ...current.eventTypes, ...values.eventTypes])],
      version: conflict ? current.version : expectedVersion,
      error: message,
    }),
    { status: refusal.status },
  );
}

async function saveEdit(request: SignedInRequest, deps: ConsoleDeps) {
  const { viewer, call, form } = request;
  const endpointId = request.param("endpointId");
  const idempotencyKey = formIdempotencyKey(form);
  const expectedVersion = expectedVersionFrom(form);
  const values = valuesFrom(request);
  try {
    const rateLimit = rateLimitFrom(values.rateLimit);
    await callService(
      deps.webhooks.updateEndpoint(
        {
          tenantId: viewer.tenantId,
          endpointId,
          url: values.url,
          description: values.description,
          eventTypes: { eventTypes: values.eventTypes },
          ...(rateLimit === null ? { clearRateLimit: true } : { rateLimit }),
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
    return editRefused(request, deps, error, { expectedVersion, values });
  }
  return redirect(endpointPath(endpointId), { kind: "success", text: "The endpoint's settings are saved." });
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
      if (isVersionMismatch(error)) return versionConflictPage(endpointId);
      throw error;
    }
    return redirect(endpointPath(endpointId), {
      kind: "success",
      text: action === "pause" ? "The endpoint is paused: new deliveries are held." : "The endpoint is resumed.",
    });
  };
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
export const webhookEndpointPages: SignedInConsoleRoute[] = [
  {
    method: "GET",
    path: ENDPOINT_LIST,
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
    path: ENDPOINT_LIST,
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
    method: "POST",
    path: "/console/webhooks/:endpointId/test",
    role: "admin",
    summary: "Sends a test event of a type from the catalog and shows the delivery with the receiver's answer.",
    handle: sendTest,
  },
];
