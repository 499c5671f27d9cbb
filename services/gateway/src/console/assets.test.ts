import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadConsoleAssets } from "./assets.js";

const staticFile = (name: string) => readFileSync(new URL(`../../static/${name}`, import.meta.url));

describe("the console's static files", () => {
  it("serves the gateway's static/ files as they are, at the address and integrity of their bytes", () => {
    const assets = loadConsoleAssets();
    for (const [name, type] of [
      ["console-script.js", "text/javascript; charset=utf-8"],
      ["console-style.css", "text/css; charset=utf-8"],
    ] as const) {
      const bytes = staticFile(name);
      const asset = assets[name];
      expect(asset.body.equals(bytes), name).toBe(true);
      expect(asset.contentType).toBe(type);
      expect(asset.path).toBe(
        `/console/assets/${createHash("sha256").update(bytes).digest("hex").slice(0, 16)}/${name}`,
      );
      expect(asset.integrity).toBe(`sha384-${createHash("sha384").update(bytes).digest("base64")}`);
    }
    expect(assets["htmx.min.js"].path).toMatch(/^\/console\/assets\/[0-9a-f]{16}\/htmx\.min\.js$/);
  });
});
