/**
 * The response headers both OpenAPI documents declare, as `components/headers`. `required: true`
 * marks what the gateway always sends on the responses that reference it; the end-to-end tests
 * check presence and value of every declared header on every response they see.
 */
export function responseHeaderComponents(rateLimitPolicy: string) {
  return {
    "X-Request-Id": {
      description: "Echoes a safe caller-supplied X-Request-Id (1-128 of A-Z a-z 0-9 . _ : -), else `req_<32 hex>`.",
      required: true,
      schema: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" },
    },
    RateLimit: {
      description:
        "IETF draft RateLimit: `r` requests may be sent now; after `t` seconds the full quota `q` of " +
        "RateLimit-Policy is available again.",
      required: true,
      schema: { type: "string", pattern: '^"default";r=[0-9]+;t=[1-9][0-9]*$' },
    },
    "RateLimit-Policy": {
      description:
        "IETF draft RateLimit-Policy of this gateway: a token bucket of `q` that refills completely in `w` " +
        "seconds. At most `q` requests in any `w` seconds are never refused; `q` at once is the burst and " +
        "`q/w` the sustained rate.",
      required: true,
      schema: { type: "string", const: rateLimitPolicy },
    },
    "Retry-After": {
      description: "Seconds to wait before retrying; on a 429 never earlier than RateLimit's `t`.",
      required: true,
      schema: { type: "string", pattern: "^[0-9]+$" },
    },
    "WWW-Authenticate": {
      description:
        'RFC 6750: `Bearer realm="api"`, with `error="invalid_token"` for a malformed, unknown or revoked key.',
      required: true,
      schema: { type: "string", pattern: '^Bearer realm="api"(, error="invalid_token")?$' },
    },
    Allow: {
      description: "The methods this path supports.",
      required: true,
      schema: { type: "string", pattern: "^[A-Z]+(, [A-Z]+)*$" },
    },
    "Accept-Post": {
      description: "Sent when the Content-Type was not JSON: the media type to use.",
      schema: { type: "string", const: "application/json" },
    },
  };
}

export const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** On every response of a rate-limited surface. */
export const everyResponseHeaders = {
  "X-Request-Id": headerRef("X-Request-Id"),
  RateLimit: headerRef("RateLimit"),
  "RateLimit-Policy": headerRef("RateLimit-Policy"),
};

/** What a status adds to every response's headers. */
export const headersForStatus: Record<number, Record<string, { $ref: string }>> = {
  401: { "WWW-Authenticate": headerRef("WWW-Authenticate") },
  405: { Allow: headerRef("Allow") },
  415: { "Accept-Post": headerRef("Accept-Post") },
  429: { "Retry-After": headerRef("Retry-After") },
  503: { "Retry-After": headerRef("Retry-After") },
};

/** Project-wide info: contact and license are the same in both documents. */
export const documentContact = { name: "Partner API support (the platform team)" };
export const documentLicense = { name: "Proprietary", identifier: "LicenseRef-Proprietary" };
