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
