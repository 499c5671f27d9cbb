import type { Context } from "koa";
import getRawBody from "raw-body";
import { ApiError } from "./api-error.js";

export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Reads and parses a JSON request body. Wrong or missing Content-Type: 415. Content-Encoding
 * other than identity: 415. Over 1 MiB (declared or streamed): 413. Not UTF-8 JSON: 400.
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
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit: MAX_BODY_BYTES, length: declared, encoding: "utf8" });
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === "entity.too.large") {
      throw new ApiError(413, `the request body must be at most ${MAX_BODY_BYTES} bytes`, { cause: error });
    }
    throw new ApiError(400, "the request body could not be read", { code: "request.body_invalid", cause: error });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiError(400, "the request body is not valid JSON", { code: "request.body_invalid" });
  }
}
