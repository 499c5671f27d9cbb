import { callService } from "../../http/api-error.js";
import {
  formIdempotencyKey,
  page,
  redirect,
  type ConsoleDeps,
  type SignedInConsoleRoute,
  type SignedInRequest,
} from "../route.js";
import { deleteConfirmation } from "../views/webhook-endpoints.js";
import { expectedVersionFrom, isVersionMismatch, versionConflictPage } from "../webhook-forms.js";

/**
 * Deleting an endpoint (owner and admin): a confirmation page naming the endpoint and what
 * deleting it does, then the API's DeleteEndpoint with the version the page showed (a change
 * meanwhile answers the conflict page, nothing deleted) and the form's Idempotency-Key.
 */

async function confirmPage(request: SignedInRequest, deps: ConsoleDeps) {
  const { viewer, call } = request;
  const { endpoint } = await callService(
    deps.webhooks.getEndpoint({ tenantId: viewer.tenantId, endpointId: request.param("endpointId") }, call),
  );
  return page("Delete the endpoint", deleteConfirmation(request.csrfToken, endpoint!));
}

async function deleteEndpoint(request: SignedInRequest, deps: ConsoleDeps) {
  const { viewer, call, form } = request;
  const endpointId = request.param("endpointId");
  const idempotencyKey = formIdempotencyKey(form);
  try {
    await callService(
      deps.webhooks.deleteEndpoint(
        {
          tenantId: viewer.tenantId,
          endpointId,
          expectedVersion: expectedVersionFrom(form),
          idempotencyKey,
          actor: call.actor,
        },
        call,
      ),
      { idempotencyKey, howToCheck: "The endpoint may have been deleted: list the endpoints" },
    );
  } catch (error) {
    if (isVersionMismatch(error)) return versionConflictPage(endpointId);
    throw error;
  }
  return redirect("/console/webhooks", {
    kind: "success",
    text: "The endpoint is deleted: it receives no more events.",
  });
}

export const webhookDeletePages: SignedInConsoleRoute[] = [
  {
    method: "GET",
    path: "/console/webhooks/:endpointId/delete",
    role: "admin",
    summary: "Delete an endpoint, step 1: what deleting it does, and the button that confirms it.",
    handle: confirmPage,
  },
  {
    method: "POST",
    path: "/console/webhooks/:endpointId/delete",
    role: "admin",
    summary: "Delete an endpoint, step 2: deletes it if still at the version the page showed (else 412).",
    handle: deleteEndpoint,
  },
];
