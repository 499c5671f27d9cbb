import { roleReaches } from "../../domain/console-role.js";
import { callService } from "../../http/api-error.js";
import { curlCommand } from "../curl-command.js";
import { ConsolePageError } from "../page-error.js";
import {
  formIdempotencyKey,
  page,
  redirect,
  type ConsoleDeps,
  type SignedInConsoleRoute,
  type SignedInRequest,
} from "../route.js";
import { deliveryDetail, recoverPreview as recoverPreviewView, recoveryDetail } from "../views/webhook-deliveries.js";
import { deliveryPath, recoveryPath } from "../views/webhooks.js";
import { isFormRefusal } from "../webhook-forms.js";
import { formUtcTime } from "../form-time.js";

/**
 * A delivery (every attempt, the exact payload, the next retry, "copy as curl" without the secret)
 * and its redrive; the recovery of an endpoint (a dry run's count, then the throttled job and a
 * page following its progress). The markup is views/webhook-deliveries.ts; this file reads
 * requests, calls and answers.
 */

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
  const curl = curlCommand({ url: endpoint!.url, payload: detail.payload, eventId: d.eventId, deliveryId: d.id });
  return page(
    `Delivery ${d.id}`,
    deliveryDetail({
      endpointId,
      deliveryId,
      detail,
      canAct: roleReaches(viewer.role, "admin"),
      csrfToken: request.csrfToken,
      curl,
    }),
  );
}

async function redriveDelivery(request: SignedInRequest, deps: ConsoleDeps) {
  const { viewer, call, form } = request;
  const endpointId = request.param("endpointId");
  const deliveryId = request.param("deliveryId");
  const idempotencyKey = formIdempotencyKey(form);
  const answer = await callService(
    deps.webhooks.redriveDelivery(
      { tenantId: viewer.tenantId, endpointId, deliveryId, idempotencyKey, actor: call.actor },
      call,
    ),
    { idempotencyKey, howToCheck: "The delivery may have been redriven: inspect it" },
  );
  const held = answer.delivery?.status === "held";
  return redirect(deliveryPath(endpointId, deliveryId), {
    kind: "success",
    text: held
      ? "The delivery is sent again as a new run of attempts, held until the endpoint is resumed."
      : "The delivery is sent again: a new run of attempts starts now.",
  });
}

function sinceFrom(request: SignedInRequest): string {
  const since = formUtcTime(request.form.get("since"));
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
  return page(
    "Recover failed deliveries",
    recoverPreviewView({ endpointId, since, count, csrfToken: request.csrfToken }),
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
  return redirect(recoveryPath(endpointId, recovery.id), {
    kind: "success",
    text: `Recovery started: ${recovery.total} deliveries to redeliver.`,
  });
}

async function recoveryPage(request: SignedInRequest, deps: ConsoleDeps) {
  const { viewer, call } = request;
  const endpointId = request.param("endpointId");
  const recoveryId = request.param("recoveryId");
  const { recovery } = await callService(
    deps.webhooks.getRecovery({ tenantId: viewer.tenantId, endpointId, recoveryId }, call),
  );
  return page("Recovery", recoveryDetail({ endpointId, recoveryId, recovery: recovery! }));
}

/** The delivery and recovery pages and actions. */
export const webhookDeliveryPages: SignedInConsoleRoute[] = [
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
    summary: "Sends one delivery again as a new run of attempts: resends a succeeded one, redrives a failed one.",
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
