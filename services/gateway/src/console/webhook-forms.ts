import { ApiError } from "../http/api-error.js";
import { ConsolePageError } from "./page-error.js";
import { page, type FormFields, type PageAnswer } from "./route.js";
import { conflictNotice } from "./views/webhook-endpoints.js";

/**
 * What the console's webhook handlers (pages/webhook-*.ts) share: the version a form carries and
 * the service's refusals they answer with a page (the markup is in views/).
 */

/** The form's expectedVersion, when it carries one (positive integer); undefined otherwise. */
export function expectedVersionFrom(form: FormFields): string | undefined {
  const value = form.get("expectedVersion");
  if (value === "") return undefined;
  if (!/^[1-9][0-9]{0,14}$/.test(value)) {
    throw new ConsolePageError(
      400,
      "Form incomplete",
      "The form's version is not valid: reload the page and try again.",
    );
  }
  return value;
}

/**
 * The form's rate limit: a number of deliveries per second, or null when the field is empty. A
 * text that is no whole number is refused like the service's refusals (400, shown beside the form).
 */
export function rateLimitFrom(text: string): number | null {
  if (text.trim() === "") return null;
  if (!/^[0-9]{1,9}$/.test(text.trim())) {
    throw new ApiError(400, "rateLimit must be an integer from 1 to 10000 (deliveries per second), or empty", {
      code: "webhook.endpoint_invalid",
    });
  }
  return Number(text.trim());
}

/** True for the service's refusal of a stale expectedVersion (412 webhook.version_mismatch). */
export const isVersionMismatch = (error: unknown): error is ApiError =>
  error instanceof ApiError && error.options.code === "webhook.version_mismatch";

/** A refusal the user can fix in the form (400), shown beside it. */
export const isFormRefusal = (error: unknown): error is ApiError => error instanceof ApiError && error.status === 400;

/** The page a stale version answers on an action without a form to show again (pause, resume, rotate). */
export const versionConflictPage = (endpointId: string): PageAnswer =>
  page("The endpoint changed", conflictNotice(endpointId), { status: 412 });
