import { callService } from "../../http/api-error.js";
import { checkPassword } from "../password-check.js";
import {
  formIdempotencyKey,
  page,
  type ConsoleDeps,
  type SignedInConsoleRoute,
  type SignedInRequest,
} from "../route.js";
import { replayedNotice, rotateForm, secretShown } from "../views/webhook-endpoints.js";
import { expectedVersionFrom, isVersionMismatch, versionConflictPage } from "../webhook-forms.js";

/**
 * Rotating a webhook endpoint's signing secret from the console: the password re-check, then the
 * new secret shown once. The markup is views/webhook-endpoints.ts.
 */

async function rotatePage(request: SignedInRequest, deps: ConsoleDeps) {
  const { endpoint } = await callService(
    deps.webhooks.getEndpoint(
      { tenantId: request.viewer.tenantId, endpointId: request.param("endpointId") },
      request.call,
    ),
  );
  return page("Rotate the signing secret", rotateForm(request.csrfToken, endpoint!));
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
    return page("Rotate the signing secret", rotateForm(request.csrfToken, endpoint!, error), { status, headers });
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
    if (isVersionMismatch(error)) return versionConflictPage(endpointId);
    throw error;
  }
  return page(
    "Secret rotated",
    answer.replayed
      ? replayedNotice(endpointId, "This rotation")
      : secretShown(endpointId, answer.secret, "The endpoint signs with this new secret from now on."),
  );
}

/** Rotating an endpoint's signing secret. */
export const webhookSecretPages: SignedInConsoleRoute[] = [
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
];
