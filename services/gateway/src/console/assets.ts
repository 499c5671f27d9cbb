import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

/** A static file of the console: served at an address that changes with its bytes. */
export interface ConsoleAsset {
  /** /console/assets/<first 16 hex of the SHA-256>/<name>: cached for a year, immutable. */
  path: string;
  contentType: string;
  body: Buffer;
  /** Subresource Integrity value (sha384-...), for the integrity attribute. */
  integrity: string;
}

export type ConsoleAssetName = "htmx.min.js" | "console-script.js" | "console-style.css" | "favicon.ico";

function asset(name: ConsoleAssetName, contentType: string, body: Buffer): ConsoleAsset {
  const digest = createHash("sha256").update(body).digest("hex").slice(0, 16);
  return {
    path: `/console/assets/${digest}/${name}`,
    contentType,
    body,
    integrity: `sha384-${createHash("sha384").update(body).digest("base64")}`,
  };
}

/**
 * The console's four static files, read once at start and served as their bytes: htmx from
 * node_modules (htmx.org, pinned to an exact version in the gateway's package.json; nothing is
 * downloaded at run time), and the console's own script and style sheet, the files of the
 * gateway's `static/` folder (its package.json exports and ships them beside `dist/`, so the
 * compiled code finds them as the sources do):
 * - `console-script.js`, a classic script the pages work without (plain forms,
 *   POST-redirect-GET). With it, every <time datetime> shows the viewer's local time with the UTC
 *   time the server rendered in its title; a <button data-copy="id" hidden> is shown and copies the
 *   text of the element with that id (the secret, "copy as curl"); htmx requests carry the
 *   session's CSRF token in X-CSRF-Token (from <meta name="csrf-token">), for hx-post buttons
 *   outside a form. No eval, no inline handlers: the CSP allows only scripts from 'self'.
 * - `console-style.css`, the one style sheet (CSP style-src 'self': no inline style anywhere).
 * - `favicon.ico`, the console's icon (a 32 px PNG in an ICO): linked by every page and also
 *   answered at `/favicon.ico`, where browsers look by themselves.
 */
export function loadConsoleAssets(): Record<ConsoleAssetName, ConsoleAsset> {
  const require = createRequire(import.meta.url);
  const file = (specifier: string) => readFileSync(require.resolve(specifier));
  const javascript = "text/javascript; charset=utf-8";
  return {
    "htmx.min.js": asset("htmx.min.js", javascript, file("htmx.org/dist/htmx.min.js")),
    "console-script.js": asset("console-script.js", javascript, file("@platform/gateway/static/console-script.js")),
    "console-style.css": asset(
      "console-style.css",
      "text/css; charset=utf-8",
      file("@platform/gateway/static/console-style.css"),
    ),
    "favicon.ico": asset("favicon.ico", "image/x-icon", file("@platform/gateway/static/favicon.ico")),
  };
}
