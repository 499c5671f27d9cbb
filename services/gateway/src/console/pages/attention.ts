import type { AttentionItem } from "@platform/proto/notify/v1/projections";
import { roleReaches, type ConsoleViewer } from "../../domain/console-role.js";
import { ApiError, callService } from "../../http/api-error.js";
import { html, type SafeHtml } from "../html.js";
import { time } from "../layout.js";
import { page, type ConsoleDeps, type SignedInConsoleRoute, type SignedInRequest } from "../route.js";

const DEAD_LETTERED = "webhook.endpoint_dead_lettered";
/** The attention poll's kind for an endpoint paused by a dead letter. */
const DEAD_LETTERED_KIND = "webhook_endpoint_dead_lettered";

/**
 * The error classes of a dead-lettered delivery's last attempt (webhooks' attention_cause), in the
 * order the inbox shows them, each with what it means and what to do before resuming.
 */
const causes: readonly { cause: string; label: string; nextStep: string }[] = [
  {
    cause: "timeout",
    label: "Timed out",
    nextStep: "The receiver did not answer within 10 seconds. Make it answer quickly (queue the work), then resume.",
  },
  {
    cause: "tls",
    label: "TLS failure",
    nextStep:
      "The receiver's certificate was refused (expired, wrong host name or incomplete chain). Fix it, then resume.",
  },
  {
    cause: "http_4xx",
    label: "Receiver answered 4xx",
    nextStep:
      "The receiver refused the request (path, authentication or signature check). Fix the receiver or the URL, then resume.",
  },
  {
    cause: "http_5xx",
    label: "Receiver answered 5xx",
    nextStep: "The receiver failed while handling the event. Fix the receiver, then resume and recover the deliveries.",
  },
  {
    cause: "refused_target",
    label: "Target refused",
    nextStep:
      "The URL resolves to an address webhooks may not call (private, loopback or a refused port). Change the URL.",
  },
  {
    cause: "connection",
    label: "Connection failed",
    nextStep: "The receiver could not be reached (DNS, refused or reset connection). Make it reachable, then resume.",
  },
  {
    cause: "http_3xx",
    label: "Receiver redirected",
    nextStep: "Redirects are not followed. Point the endpoint at the final URL.",
  },
];

const causeOf = (cause: string | undefined) =>
  causes.find((known) => known.cause === cause) ?? {
    cause: cause ?? "unknown",
    label: "Cause not recorded",
    nextStep: "Open the endpoint's deliveries to see the failed attempts, fix the receiver, then resume.",
  };

async function openItems(viewer: ConsoleViewer, call: SignedInRequest["call"], deps: ConsoleDeps) {
  const items: AttentionItem[] = [];
  let cursor = "";
  for (let pageCount = 0; pageCount < 10; pageCount++) {
    const answer = await callService(
      deps.projections.listAttention({ tenantId: viewer.tenantId, limit: 100, cursor }, call),
    );
    items.push(...answer.items);
    cursor = answer.nextCursor;
    if (!cursor) break;
  }
  return items;
}

interface FlaggedEndpoint {
  id: string;
  url: string | undefined;
  cause: string | undefined;
  since: string | undefined;
}

/**
 * The endpoints needing attention after a dead letter: the attention poll's items, each carrying
 * its cause (the error class of the dead-lettered delivery's last attempt), with the endpoint read
 * for its URL and current flag (one read per flagged endpoint, however many endpoints the tenant
 * has). An endpoint resumed a moment ago (its flag cleared, the item not yet closed) is left out;
 * one since deleted (404) still shows, by id.
 */
async function flaggedEndpoints(
  items: AttentionItem[],
  viewer: ConsoleViewer,
  call: SignedInRequest["call"],
  deps: ConsoleDeps,
): Promise<FlaggedEndpoint[]> {
  const read = await Promise.all(
    items
      .filter((item) => item.kind === DEAD_LETTERED_KIND)
      .map(async (item) => {
        try {
          const answer = await callService(
            deps.webhooks.getEndpoint({ tenantId: viewer.tenantId, endpointId: item.subjectId }, call),
          );
          return { item, endpoint: answer.endpoint };
        } catch (error) {
          if (error instanceof ApiError && error.status === 404) return { item, endpoint: undefined };
          throw error;
        }
      }),
  );
  return read
    .filter(({ endpoint }) => endpoint === undefined || endpoint.attentionReason === DEAD_LETTERED)
    .map(({ item, endpoint }) => ({
      id: item.subjectId,
      url: endpoint?.url,
      cause: item.cause || endpoint?.attentionCause || undefined,
      since: endpoint?.attentionSince || item.openedAt,
    }));
}

function endpointGroups(flagged: FlaggedEndpoint[], viewer: ConsoleViewer): SafeHtml {
  if (flagged.length === 0) return html`<p>No endpoint is paused by a dead letter.</p>`;
  const canAct = roleReaches(viewer.role, "admin");
  const groups = [...new Set(flagged.map((endpoint) => causeOf(endpoint.cause).cause))].map((cause) => ({
    ...causeOf(cause === "unknown" ? undefined : cause),
    endpoints: flagged.filter((endpoint) => causeOf(endpoint.cause).cause === cause),
  }));
  groups.sort((a, b) => causes.findIndex((c) => c.cause === a.cause) - causes.findIndex((c) => c.cause === b.cause));
  return html`${groups.map(
    (group) =>
      html`<section class="attention-group" aria-labelledby="cause-${group.cause}">
        <h3 id="cause-${group.cause}">${group.label} (${group.endpoints.length})</h3>
        <p>${group.nextStep}</p>
        <ul class="attention-list">
          ${group.endpoints.map(
            (endpoint) =>
              html`<li>
                <a href="/console/webhooks/${endpoint.id}">${endpoint.url ?? endpoint.id}</a>
                <span class="muted">paused since ${time(endpoint.since)}</span>
                ${
                  canAct
                    ? html`<a class="next-step" href="/console/webhooks/${endpoint.id}#recover"
                        >Resume and recover deliveries</a
                      >`
                    : html`<span class="muted">An admin or owner can resume it.</span>`
                }
              </li>`,
          )}
        </ul>
      </section>`,
  )}`;
}

function escalations(items: AttentionItem[]): SafeHtml {
  const open = items.filter((item) => item.kind === "escalation");
  if (open.length === 0) return html`<p>No open escalation.</p>`;
  return html`<ul class="attention-list">
      ${open.map(
        (item) =>
          html`<li>
            <code>${item.subjectId}</code> <span>${item.reasonCode}</span>
            <span class="muted">opened ${time(item.openedAt)}</span>
          </li>`,
      )}
    </ul>
    <p>
      Next step: handle each escalation with the client in your own system; it closes here when your platform reports it
      resolved (<code>escalation.resolved</code>).
    </p>`;
}

function activation(items: AttentionItem[], viewer: ConsoleViewer): SafeHtml {
  const stalled = items.find((item) => item.kind === "activation_stalled");
  if (!stalled) return html`<p>Activation is not stalled.</p>`;
  return html`<p>
    Activation stalled (<span>${stalled.reasonCode}</span>) since ${time(stalled.openedAt)}.
    <a class="next-step" href="/console/tenant#activation">See what blocks it</a>
    ${
      roleReaches(viewer.role, "owner")
        ? html` and resume activation there once the failing capability passes.`
        : html` (the owner resumes it).`
    }
  </p>`;
}

/** The attention inbox: what needs someone, grouped, each with its next step. */
export const attentionPages: SignedInConsoleRoute[] = [
  {
    method: "GET",
    path: "/console/attention",
    role: "viewer",
    summary:
      "The attention inbox: endpoints paused by a dead letter grouped by cause, open escalations and a stalled activation.",
    async handle({ viewer, call }, deps) {
      const items = await openItems(viewer, call, deps);
      const flagged = await flaggedEndpoints(items, viewer, call, deps);
      const count = flagged.length + items.filter((item) => item.kind !== DEAD_LETTERED_KIND).length;
      return page(
        "Attention",
        html`<p>${count === 0 ? "Nothing needs attention." : `${count} open item${count === 1 ? "" : "s"}.`}</p>
          <section aria-labelledby="endpoints-heading">
            <h2 id="endpoints-heading">Webhook endpoints paused by a dead letter</h2>
            ${endpointGroups(flagged, viewer)}
          </section>
          <section aria-labelledby="escalations-heading">
            <h2 id="escalations-heading">Escalations</h2>
            ${escalations(items)}
          </section>
          <section aria-labelledby="activation-heading">
            <h2 id="activation-heading">Activation</h2>
            ${activation(items, viewer)}
          </section>`,
      );
    },
  },
];
