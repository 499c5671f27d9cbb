import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { consoleScript } from "./assets/console-script.js";
import { consoleStyle } from "./assets/console-style.js";

/** A static file of the console: served at an address that changes with its bytes. */
export interface ConsoleAsset {
  /** /console/assets/<first 16 hex of the SHA-256>/<name>: cached for a year, immutable. */
  path: string;
  contentType: string;
  body: Buffer;
  /** Subresource Integrity value (sha384-...), for the integrity attribute. */
  integrity: string;
}

export type ConsoleAssetName = "htmx.min.js" | "console-script.js" | "console-style.css";

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
 * The console's three static files, read once at start: htmx from node_modules (htmx.org, pinned
 * to an exact version in the gateway's package.json; nothing is downloaded at run time), the
 * console's own script and style sheet.
 */
export function loadConsoleAssets(): Record<ConsoleAssetName, ConsoleAsset> {
  const require = createRequire(import.meta.url);
  const htmx = readFileSync(require.resolve("htmx.org/dist/htmx.min.js"));
  return {
    "htmx.min.js": asset("htmx.min.js", "text/javascript; charset=utf-8", htmx),
    "console-script.js": asset("console-script.js", "text/javascript; charset=utf-8", Buffer.from(consoleScript)),
    "console-style.css": asset("console-style.css", "text/css; charset=utf-8", Buffer.from(consoleStyle)),
  };
}
