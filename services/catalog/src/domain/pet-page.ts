import { InvalidArgumentError } from "@platform/service-kit/errors";
import { isPetStatus, parseInt64, type Pet, type PetStatus } from "./pet.js";

/** Page sizes for listing pets (spec part 8: 1-100, default 20). */
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export interface PetPageQuery {
  limit: number;
  status: PetStatus | undefined;
  /** Keyset position: list pets with id greater than this. */
  afterId: string | undefined;
}

export class InvalidPageError extends InvalidArgumentError {
  override name = "InvalidPageError";
}

/** 0 (not given) means the default; anything outside 1-100 is rejected, never clamped. */
export function resolvePageSize(requested: number): number {
  if (requested === 0) return DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(requested) || requested < 1 || requested > MAX_PAGE_SIZE) {
    throw new InvalidPageError("page.invalid_limit", `limit must be between 1 and ${MAX_PAGE_SIZE}`);
  }
  return requested;
}

interface PageTokenBody {
  /** version of the token format */
  v: 1;
  /** last id of the previous page */
  a: string;
  /** status filter the token was issued for */
  s: PetStatus | null;
}

/**
 * Page tokens are opaque to callers: base64url of a small JSON document naming the last id seen
 * and the filter it was issued for. Ordering is by id, so a page is stable under inserts.
 */
export function encodePageToken(lastId: string, status: PetStatus | undefined): string {
  const body: PageTokenBody = { v: 1, a: lastId, s: status ?? null };
  return Buffer.from(JSON.stringify(body)).toString("base64url");
}

/** Decodes a token and checks it was issued for the same filter; throws InvalidPageError. */
export function decodePageToken(token: string, status: PetStatus | undefined): string {
  const invalid = () => new InvalidPageError("page.invalid_cursor", "cursor is not valid for this listing");
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(token)) throw invalid();
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  if (typeof body !== "object" || body === null) throw invalid();
  const { v, a, s } = body as Partial<PageTokenBody>;
  if (v !== 1 || typeof a !== "string" || parseInt64(a) === undefined) throw invalid();
  if (!(s === null || isPetStatus(s)) || (s ?? undefined) !== status) throw invalid();
  return a;
}

/** Given limit+1 rows, the page to return and the token for the next one (if any). */
export function toPage(rows: Pet[], query: PetPageQuery): { pets: Pet[]; nextPageToken: string | undefined } {
  if (rows.length <= query.limit) return { pets: rows, nextPageToken: undefined };
  const pets = rows.slice(0, query.limit);
  return { pets, nextPageToken: encodePageToken(pets[pets.length - 1]!.id, query.status) };
}
