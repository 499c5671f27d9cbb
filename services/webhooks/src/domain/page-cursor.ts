/**
 * Keyset paging of endpoint and delivery lists, newest first: a page size and an opaque cursor
 * that names the last row of the previous page by its sequence number. Partners pass a cursor back
 * exactly as received; anything else is refused, never guessed at.
 */
import { InvalidArgumentError } from "@platform/service-kit/errors";

export const defaultPageSize = 20;
export const maxPageSize = 100;

export class InvalidPageRequestError extends InvalidArgumentError {
  override name = "InvalidPageRequestError";
  constructor(message: string) {
    super("request.invalid", message);
  }
}

/** 0 means the default (20); 1-100 as given; anything else is refused. */
export function pageSize(limit: number): number {
  if (limit === 0) return defaultPageSize;
  if (!Number.isInteger(limit) || limit < 1 || limit > maxPageSize) {
    throw new InvalidPageRequestError(`limit must be an integer from 1 to ${maxPageSize}`);
  }
  return limit;
}

const CURSOR_TEXT = /^s:([1-9][0-9]{0,17})$/;

/** The cursor after the row with sequence number `seq`. */
export function encodeCursor(seq: number | string): string {
  return Buffer.from(`s:${String(seq)}`, "utf8").toString("base64url");
}

/** The sequence number a cursor names; undefined for the first page (empty cursor). */
export function decodeCursor(cursor: string): number | undefined {
  if (cursor === "") return undefined;
  const match = /^[A-Za-z0-9_-]{1,40}$/.test(cursor)
    ? CURSOR_TEXT.exec(Buffer.from(cursor, "base64url").toString("utf8"))
    : null;
  if (!match || encodeCursor(match[1]!) !== cursor) {
    throw new InvalidPageRequestError("cursor is not valid; pass back a nextCursor exactly as received");
  }
  return Number(match[1]);
}
