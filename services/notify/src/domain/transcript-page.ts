import { InvalidArgumentError } from "@platform/service-kit/errors";

/** A page of a conversation transcript: newest first, keyset-paged by the entry's sequence number. */
export const DEFAULT_TRANSCRIPT_PAGE = 20;
export const MAX_TRANSCRIPT_PAGE = 100;

export class TranscriptCursorInvalidError extends InvalidArgumentError {
  override name = "TranscriptCursorInvalidError";
  constructor() {
    super("request.invalid", "cursor is not valid; pass back a nextCursor exactly as received");
  }
}

/** 0 means "not given" (the default); anything outside 1-100 is refused, never clamped. */
export function resolveTranscriptLimit(limit: number): number {
  const resolved = limit === 0 ? DEFAULT_TRANSCRIPT_PAGE : limit;
  if (!Number.isInteger(resolved) || resolved < 1 || resolved > MAX_TRANSCRIPT_PAGE) {
    throw new InvalidArgumentError("request.invalid", `limit must be an integer from 1 to ${MAX_TRANSCRIPT_PAGE}`);
  }
  return resolved;
}

export const encodeTranscriptCursor = (seq: string) => Buffer.from(`s:${seq}`).toString("base64url");

/** The sequence number to continue below; undefined for the first page. */
export function decodeTranscriptCursor(cursor: string): string | undefined {
  if (cursor === "") return undefined;
  const match = /^s:([1-9][0-9]{0,17})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match) throw new TranscriptCursorInvalidError();
  return match[1];
}

/** From `limit + 1` entries read newest first: the page, and the cursor of the next one if more remain. */
export function toTranscriptPage<E extends { seq: string }>(
  entries: E[],
  limit: number,
): { entries: E[]; nextCursor: string } {
  const page = entries.slice(0, limit);
  return {
    entries: page,
    nextCursor: entries.length > limit ? encodeTranscriptCursor(page[page.length - 1]!.seq) : "",
  };
}
