import { describe, expect, it } from "vitest";
import { codeCatalogue, codeEntry, isCatalogueCode, type CodeEntry } from "../src/index.js";
import {
  catalogEventTypes,
  codeLiteralsIn,
  eventTypeNames,
  keyedCodesIn,
  scanKeyedCodes,
  scanSources,
  sourceFiles,
} from "./code-scan.js";

describe("the code catalogue covers every code the platform produces", () => {
  it("the scan reads the services' and packages' sources and knows the event catalog", () => {
    const files = sourceFiles();
    expect(files.some((file) => file.endsWith("services/webhooks/src/domain/endpoint.ts"))).toBe(true);
    expect(files.some((file) => file.endsWith("services/gateway/src/http/problem.ts"))).toBe(true);
    expect(files.some((file) => file.endsWith(".test.ts"))).toBe(false);
    expect(catalogEventTypes()).toContain("booking.created");
    expect(catalogEventTypes()).toContain("usage.snapshot");
    expect(scanSources().length).toBeGreaterThan(50);
  });

  it("self-check: a planted uncatalogued code is found, event types and other dotted strings are not", () => {
    const planted = [
      'throw new InvalidArgumentError("webhook.made_up_code", "no such code");',
      "const code = 'tenant.frobnicated';",
      'const type = "booking.created"; // an event type',
      'const path = "data.object"; const key = "grpc.keepalive_time_ms";',
    ].join("\n");
    const found = codeLiteralsIn("planted.ts", planted, eventTypeNames());
    expect(found).toEqual([
      { file: "planted.ts", line: 1, code: "webhook.made_up_code" },
      { file: "planted.ts", line: 2, code: "tenant.frobnicated" },
    ]);
    expect(found.filter(({ code }) => !isCatalogueCode(code))).toHaveLength(2);
  });

  it("every code-shaped literal in services/*/src and packages/*/src is in the catalogue", () => {
    const uncatalogued = scanSources()
      .filter(({ code }) => !isCatalogueCode(code))
      .map(({ file, line, code }) => `${file}:${line} ${code}`);
    expect(uncatalogued).toEqual([]);
  });

  it("self-check: a lastErrorCode, reason code or blocking reason set by key is found with its use", () => {
    const planted = [
      'tenant.lastErrorCode = "account.tenant_unavailable";',
      'const object = { reason_code: "partner.recipient_opted_out" };',
      "patch({ last_error_code: 'usage.limits_invalid' });",
    ].join("\n");
    const found = keyedCodesIn("planted.ts", planted);
    expect(found.map(({ code, use }) => [code, use])).toEqual([
      ["account.tenant_unavailable", "lastErrorCode"],
      ["usage.limits_invalid", "lastErrorCode"],
      ["partner.recipient_opted_out", "reasonCode"],
    ]);
    // usage.limits_invalid is a problem code, not a lastErrorCode: the next test would fail on it.
    expect(codeEntry("usage.limits_invalid")?.usedAs).not.toContain("lastErrorCode");
  });

  it("every lastErrorCode, reason code and blocking reason a source sets is catalogued with that use", () => {
    const wrong = scanKeyedCodes()
      .filter(({ code, use }) => !codeEntry(code)?.usedAs.includes(use))
      .map(({ file, line, code, use }) => `${file}:${line} ${code} (as ${use})`);
    expect(wrong).toEqual([]);
  });

  it("every entry is complete: a use, a title, a meaning and a reaction; a status exactly on problem codes", () => {
    for (const [code, entry] of Object.entries(codeCatalogue) as [string, CodeEntry][]) {
      expect(code, code).toMatch(/^[a-z]+\.[a-z][a-z0-9_]*$/);
      expect(entry.usedAs.length, code).toBeGreaterThan(0);
      expect(entry.title.trim(), code).not.toBe("");
      expect(entry.meaning.trim(), code).not.toBe("");
      expect(entry.reaction.trim(), code).not.toBe("");
      expect(entry.status !== undefined, code).toBe(entry.usedAs.includes("problem"));
      if (entry.usedAs.includes("internal")) expect(entry.usedAs, code).toEqual(["internal"]);
    }
  });
});
