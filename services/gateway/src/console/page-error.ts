/** A console refusal, rendered as a page with this status (403, 404, 410, 429 ...) and title. */
export class ConsolePageError extends Error {
  override name = "ConsolePageError";
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/**
 * What an error page says for a service's refusal: the product's words for the codes a console
 * page can meet, else a sentence per status. Never the service's own message, which is written
 * for API callers and logs (ids, field names).
 */
const CODE_WORDS: Record<string, string> = {
  "webhook.endpoint_not_found": "This webhook endpoint does not exist, or it was deleted.",
  "webhook.delivery_not_found":
    "This delivery does not exist for this endpoint, or it is older than the 30-day retention.",
  "webhook.recovery_not_found": "This recovery does not exist for this endpoint.",
  "webhook.delivery_not_redrivable":
    "This delivery is still on its way (pending, or held while the endpoint is paused), so it cannot be resent yet. " +
    "Reload it to see where it stands.",
  "webhook.redrive_window_closed": "This event is older than the 30-day retention, so it can no longer be resent.",
  "webhook.endpoint_paused": "The endpoint is paused. Resume it first, then recover its deliveries.",
  "webhook.recovery_in_progress":
    "A recovery of this endpoint is already running. Follow it on the endpoint's page and start another once it " +
    "has finished.",
  "webhook.version_mismatch":
    "Someone changed this endpoint after you opened the page, so nothing was done. Reload it and try again.",
  "idempotency.in_progress": "This form is still being handled. Wait a moment, then reload the page.",
  "idempotency.key_reused": "This form was already sent with other values. Reload the page and fill it in again.",
  "request.rate_limited": "Too many requests right now. Wait a moment and try again.",
};

const STATUS_WORDS: Record<number, string> = {
  400: "Something in this request is not valid. Go back, check what you entered and try again.",
  403: "Your role does not allow this. Ask an owner of your tenant if you need it.",
  404: "There is nothing here: the page does not exist, or what it showed was deleted.",
  409: "This cannot be done in the state it is in now. Reload the page to see where it stands.",
  412: "This changed after you opened the page, so nothing was done. Reload it and try again.",
  429: "Too many requests right now. Wait a moment and try again.",
};

export function productWords(status: number, code: string | undefined): string {
  return (
    (code && CODE_WORDS[code]) ??
    STATUS_WORDS[status] ??
    "The console could not complete this request. Go back and try again; if it persists, contact support."
  );
}
