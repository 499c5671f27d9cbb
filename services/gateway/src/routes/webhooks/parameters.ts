import { tenantQueryParameters } from "../../http/page-query.js";
import { deliveryQueryShape, expectedVersionQueryShape, messageLogQueryShape } from "./shapes.js";

/** The OpenAPI parameters of the webhook routes. */
export const endpointIdParameter = {
  name: "endpointId",
  in: "path",
  required: true,
  description: '"ep_" and 24 lowercase hex; any other id is not found.',
  schema: { type: "string", maxLength: 200 },
};
export const deliveryIdParameter = {
  name: "deliveryId",
  in: "path",
  required: true,
  description: '"dlv_" and 24 lowercase hex; any other id is not found.',
  schema: { type: "string", maxLength: 200 },
};
export const recoveryIdParameter = {
  name: "recoveryId",
  in: "path",
  required: true,
  description: '"rcv_" and 24 lowercase hex; any other id is not found.',
  schema: { type: "string", maxLength: 200 },
};
/** The optional `expectedVersion` query parameter of delete, pause, resume and rotate. */
export const expectedVersionParameter = tenantQueryParameters(expectedVersionQueryShape)[0]!;

/** A ledger page's parameters: the page, `status`, `eventType`, `eventId`. */
export const deliveryQueryParameters = tenantQueryParameters(deliveryQueryShape);

/** The message log's parameters: a ledger page's and `createdAfter`, `createdBefore`. */
export const messageLogQueryParameters = tenantQueryParameters(messageLogQueryShape);
