/**
 * The JSON representations the routes answer with, for code outside the routes that shows the same
 * resources (the admin CLI prints what the tenant interface would answer). Import these, never a
 * route table.
 */
export { capabilityToJson, manifestToJson } from "./activation/json.js";
export { tenantToJson } from "./tenant/json.js";
export { usageToJson } from "./usage/json.js";
