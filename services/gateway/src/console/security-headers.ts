import type { Context } from "koa";

/**
 * The Content-Security-Policy of every console response: only this origin's scripts, styles,
 * images, forms and connections; no inline script or style, no eval, no plugins, no <base>;
 * framing by `frameAncestors` only ('none' unless CONSOLE_FRAME_ANCESTORS names partner origins).
 */
export function consoleCsp(frameAncestors: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${frameAncestors}`,
  ].join("; ");
}

/**
 * Sets the console's security headers on a response (pages, redirects, errors and assets alike).
 * Strict-Transport-Security only when the request came over HTTPS (TRUST_PROXY decides whether
 * X-Forwarded-Proto says so).
 */
export function setConsoleSecurityHeaders(ctx: Context, frameAncestors: string): void {
  ctx.set("content-security-policy", consoleCsp(frameAncestors));
  if (frameAncestors === "'none'") ctx.set("x-frame-options", "DENY");
  else if (frameAncestors === "'self'") ctx.set("x-frame-options", "SAMEORIGIN");
  ctx.set("x-content-type-options", "nosniff");
  // same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` with a plain
  // form's POST (Fetch, "append a request Origin header"), which the router's same-origin check
  // must refuse, so every form would fail with JavaScript off. Other origins still get no Referer.
  ctx.set("referrer-policy", "same-origin");
  ctx.set("cross-origin-opener-policy", "same-origin");
  ctx.set("cross-origin-resource-policy", "same-origin");
  ctx.set("permissions-policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=(), interest-cohort=()");
  if (ctx.protocol === "https") ctx.set("strict-transport-security", "max-age=31536000; includeSubDomains");
}
