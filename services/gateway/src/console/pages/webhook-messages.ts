import type { Context } from "koa";
import type { Endpoint } from "@platform/proto/webhooks/v1";
import { callService } from "../../http/api-error.js";
import { page, type ConsoleDeps, type SignedInConsoleRoute, type SignedInRequest } from "../route.js";
import { MESSAGE_LOG, messageLog, type MessageLogFilters } from "../views/webhook-messages.js";
import { STATUS_TEXT } from "../views/webhooks.js";
import { formUtcTime } from "../form-time.js";
import { isFormRefusal } from "../webhook-forms.js";

/**
 * The message log (Svix's name for it): every delivery of the tenant's endpoints in one list,
 * searched by event id and type, filtered by status and creation time, paged with the cursor of
 * the webhooks service's ListDeliveries (without an endpoint). Filters live in the URL, so a
 * search can be bookmarked and shared.
 */

const PAGE_SIZE = 25;
/** The endpoints named in the log: one page of the list (a tenant with more sees the others by id). */
const ENDPOINT_NAMES = 100;

const FILTER_NAMES = ["eventId", "eventType", "status", "from", "to"] as const;

/** The filters of the URL's query, each one string ("" when absent or repeated). */
export function messageLogFiltersFrom(query: Context["query"]): MessageLogFilters {
  const one = (name: string) => {
    const value = query[name];
    return typeof value === "string" ? value.trim() : "";
  };
  return Object.fromEntries(FILTER_NAMES.map((name) => [name, one(name)])) as unknown as MessageLogFilters;
}

/**
 * The service's request for these filters, or the problem to show beside the form: times are
 * datetime-local values read as UTC (or RFC 3339 with a zone), the window must run forwards, the
 * status must be one the ledger knows.
 */
export function messageLogQuery(filters: MessageLogFilters):
  | {
      ok: true;
      query: { eventId: string; eventType: string; status: string; createdAfter: string; createdBefore: string };
    }
  | { ok: false; problem: string } {
  const createdAfter = filters.from === "" ? "" : formUtcTime(filters.from);
  const createdBefore = filters.to === "" ? "" : formUtcTime(filters.to);
  if (createdAfter === undefined) return { ok: false, problem: "Enter “Created from” as a date and time (UTC)." };
  if (createdBefore === undefined) return { ok: false, problem: "Enter “Created before” as a date and time (UTC)." };
  if (createdAfter !== "" && createdBefore !== "" && createdAfter >= createdBefore) {
    return { ok: false, problem: "“Created from” must be before “Created before”." };
  }
  if (filters.status !== "" && !(filters.status in STATUS_TEXT)) {
    return { ok: false, problem: "Choose a status from the list." };
  }
  if (filters.eventId.length > 200 || filters.eventType.length > 200) {
    return { ok: false, problem: "An event id or type has at most 200 characters." };
  }
  return {
    ok: true,
    query: {
      eventId: filters.eventId,
      eventType: filters.eventType,
      status: filters.status,
      createdAfter,
      createdBefore,
    },
  };
}

async function messageLogPage(request: SignedInRequest, deps: ConsoleDeps) {
  const { ctx, viewer, call } = request;
  const tenantId = viewer.tenantId;
  const filters = messageLogFiltersFrom(ctx.query);
  const cursorValue = ctx.query.cursor;
  const cursor = typeof cursorValue === "string" ? cursorValue : "";
  const filtered = Object.values(filters).some((value) => value !== "");
  const [catalog, endpointList] = await Promise.all([
    callService(deps.webhooks.listEventTypes({}, call)),
    callService(deps.webhooks.listEndpoints({ tenantId, limit: ENDPOINT_NAMES, cursor: "" }, call)),
  ]);
  const endpoints = new Map<string, Endpoint>(endpointList.endpoints.map((endpoint) => [endpoint.id, endpoint]));
  const base = { filters, catalog: catalog.eventTypes, endpoints, filtered };
  const refused = (problem: string) =>
    page("Message log", messageLog({ ...base, error: problem, deliveries: [], next: "" }), { status: 400 });

  const parsed = messageLogQuery(filters);
  if (!parsed.ok) return refused(parsed.problem);
  let answer;
  try {
    answer = await callService(
      deps.webhooks.listDeliveries({ tenantId, endpointId: "", limit: PAGE_SIZE, cursor, ...parsed.query }, call),
    );
  } catch (error) {
    // A cursor that is not one of ours, or a filter the service refuses: said beside the form.
    if (!isFormRefusal(error)) throw error;
    return refused("This search could not be run. Check the filters, or clear them and start again.");
  }
  const setFilters = Object.entries(filters).filter(([, value]) => value !== "");
  const next =
    answer.nextCursor &&
    `${MESSAGE_LOG}?${new URLSearchParams([...setFilters, ["cursor", answer.nextCursor]]).toString()}`;
  return page("Message log", messageLog({ ...base, deliveries: answer.deliveries, next }));
}

/** The message log page. Before `/console/webhooks/:endpointId` in the table, which would take "messages" for an id. */
export const webhookMessagePages: SignedInConsoleRoute[] = [
  {
    method: "GET",
    path: MESSAGE_LOG,
    role: "viewer",
    summary:
      "The message log: every delivery of the tenant's endpoints, searched by event id and type, filtered by status " +
      "and creation time, paged.",
    handle: messageLogPage,
  },
];
