import type { Context } from "koa";
import getRawBody from "raw-body";
import { ApiError } from "../api-error.js";
import { illFormedTextFields } from "./unicode-text.js";

/** A JSON escape of a UTF-16 surrogate (paired or not). */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

export const MAX_BODY_BYTES = 1024 * 1024;

/** Throws on malformed UTF-8 instead of substituting U+FFFD; drops a leading BOM. */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads and parses a JSON request body. Wrong or missing Content-Type: 415. Content-Encoding
 * other than identity: 415. Over 1 MiB (declared or streamed): 413. Not UTF-8 JSON: 400. Text
 * that is not well-formed (invalid UTF-8 bytes, a lone surrogate escape such as "\ud800"): 400
 * naming the fields, never silently replaced by U+FFFD.
 */
export async function readJsonBody(ctx: Context): Promise<unknown> {
  const contentType = ctx.get("content-type");
  const [mediaType = "", ...params] = contentType.split(";").map((part) => part.trim().toLowerCase());
  if (mediaType !== "application/json" && !/^application\/[a-z0-9.+-]+\+json$/.test(mediaType)) {
    throw new ApiError(415, "Content-Type must be application/json", {
      headers: { "accept-post": "application/json" },
    });
  }
  const charset = params
    .find((p) => p.startsWith("charset="))
    ?.slice("charset=".length)
    .replaceAll('"', "");
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
    throw new ApiError(415, "the request body must be UTF-8 encoded JSON");
  }
  const encoding = ctx.get("content-encoding").toLowerCase();
  if (encoding !== "" && encoding !== "identity") {
    throw new ApiError(415, `Content-Encoding ${encoding} is not supported`);
  }
  const declared = ctx.request.length;
  if (declared !== undefined && declared > MAX_BODY_BYTES) {
    throw new ApiError(413, `the request body must be at most ${MAX_BODY_BYTES} bytes`);
  }
  let bytes: Buffer;
  try {
    bytes = await getRawBody(ctx.req, { limit: MAX_BODY_BYTES, length: declared });
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === "entity.too.large") {
      throw new ApiError(413, `the request body must be at most ${MAX_BODY_BYTES} bytes`, { cause: error });
    }
    throw new ApiError(400, "the request body could not be read", { code: "request.body_invalid", cause: error });
  }
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw new ApiError(400, "the request body is not valid UTF-8", { code: "request.body_invalid" });
  }
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    throw new ApiError(400, "the request body is not valid JSON", { code: "request.body_invalid" });
  }
  // Decoded as strict UTF-8, the text can only hold a lone surrogate through a \uD800-\uDFFF
  // escape: bodies without one (nearly all) skip the walk over every string.
  const illFormed = SURROGATE_ESCAPE.test(text) ? illFormedTextFields(body) : [];
  if (illFormed.length > 0) {
    throw new ApiError(
      400,
      illFormed.map((field) => `${field} must be well-formed Unicode text (it contains a lone surrogate)`).join("; "),
      { code: "request.invalid" },
    );
  }
  return body;
}
