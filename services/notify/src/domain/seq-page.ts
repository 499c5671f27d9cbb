import { InvalidArgumentError } from "@platform/service-kit/errors";

/**
 * Keyset pages over a sequence number, newest first: conversation transcripts (the entry's
 * sequence) and the poll projections (the stream sequence). `limit` 1-100, an opaque cursor.
 */
export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;

export class PageCursorInvalidError extends InvalidArgumentError {
  override name = "PageCursorInvalidError";
  constructor() {
    super("request.invalid", "cursor is not valid; pass back a nextCursor exactly as received");
  }
}

/** 0 means "not given" (the default); anything outside 1-100 is refused, never clamped. */
export function resolvePageLimit(limit: number): number {
  const resolved = limit === 0 ? DEFAULT_PAGE : limit;
  if (!Number.isInteger(resolved) || resolved < 1 || resolved > MAX_PAGE) {
    throw new InvalidArgumentError("request.invalid", `limit must be an integer from 1 to ${MAX_PAGE}`);
  }
  return resolved;
}

export const encodeSeqCursor = (seq: string) => Buffer.from(`s:${seq}`).toString("base64url");

/** The sequence number to continue below; undefined for the first page. */
export function decodeSeqCursor(cursor: string): string | undefined {
  if (cursor === "") return undefined;
  const match = /^s:([1-9][0-9]{0,17})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match) throw new PageCursorInvalidError();
  return match[1];
}

/** From `limit + 1` rows read newest first: the page, and the cursor of the next one if more remain. */
export function toSeqPage<E extends { seq: string }>(
  entries: E[],
  limit: number,
): { entries: E[]; nextCursor: string } {
  const page = entries.slice(0, limit);
  return {
    entries: page,
    nextCursor: entries.length > limit ? encodeSeqCursor(page[page.length - 1]!.seq) : "",
  };
}
