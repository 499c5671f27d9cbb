import { describe, expect, it } from "vitest";
import { loadConsoleAssets } from "./assets.js";
import { html as h } from "./html.js";
import { csrfField, idempotencyField, renderShell, time, utcText } from "./layout.js";
import { ConsolePageError } from "./page-error.js";
import { formIdempotencyKey, isConsoleLocation, type FormFields } from "./route.js";
import { redactConsolePath } from "./routes.js";

const assets = loadConsoleAssets();
const form = (fields: Record<string, string>): FormFields => ({
  get: (name) => fields[name] ?? "",
  all: (name) => (fields[name] === undefined ? [] : [fields[name]]),
});

describe("the console's layout helpers", () => {
  it("csrfField and idempotencyField are hidden inputs; each idempotency field is a new key", () => {
    expect(String(csrfField('t"ok'))).toBe('<input type="hidden" name="_csrf" value="t&quot;ok" />');
    const [a, b] = [String(idempotencyField()), String(idempotencyField())];
    expect(a).toMatch(/^<input type="hidden" name="_idempotency" value="console-[0-9a-f-]{36}" \/>$/);
    expect(a).not.toBe(b);
    const key = /value="([^"]+)"/.exec(a)![1]!;
    expect(formIdempotencyKey(form({ _idempotency: key }))).toBe(key);
    expect(() => formIdempotencyKey(form({}))).toThrow(ConsolePageError);
    expect(() => formIdempotencyKey(form({ _idempotency: "short" }))).toThrow(ConsolePageError);
  });

  it("time renders UTC in <time datetime>, and a dash for nothing", () => {
    expect(String(time("2026-11-24T12:00:05.123Z"))).toBe(
      '<time datetime="2026-11-24T12:00:05.123Z">2026-11-24 12:00:05 UTC</time>',
    );
    expect(String(time(undefined))).toBe("<span>—</span>");
    expect(String(time("not a time"))).toBe("<span>—</span>");
    expect(utcText(new Date(0))).toBe("1970-01-01 00:00:00 UTC");
  });

  it("the shell has a skip link, <main>, the user's nav by role, and no inline script or style", () => {
    const render = (role: "viewer" | "owner") =>
      renderShell({
        title: "Home <1>",
        body: h`<p>${"<b>"}</p>`,
        viewer: { userId: "usr_1", tenantId: "t_1", email: "a@example.com", role },
        csrfToken: "tok",
        flash: { kind: "success", text: "Saved <now>." },
        path: "/console",
        assets,
      });
    const page = render("viewer");
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).toContain('<a class="skip-link" href="#main">Skip to content</a>');
    expect(page).toContain('<main id="main" tabindex="-1">');
    expect(page).toContain("<title>Home &lt;1&gt; · Console</title>");
    expect(page).toContain("<p>&lt;b&gt;</p>");
    expect(page).toContain("Saved &lt;now&gt;.");
    expect(page).toContain('aria-current="page"');
    expect(page).not.toContain('href="/console/users"');
    expect(render("owner")).toContain('href="/console/users"');
    expect(page.match(/<script\b[^>]*>/g)).toHaveLength(2);
    expect(page).not.toMatch(/<script\b(?![^>]*\ssrc=)[^>]*>/);
    expect(page).not.toMatch(/\son[a-z]+=|\sstyle=|<style/i);
  });
});

describe("console paths", () => {
  it.each(["/console", "/console/webhooks?x=1", "/console/users/usr_1"])("%s is a console location", (path) =>
    expect(isConsoleLocation(path)).toBe(true),
  );
  it.each([
    "/consolex",
    "https://evil.example/console",
    "//evil.example/console",
    "/console/\\evil",
    "/console/a\nb",
    "",
  ])("%s is not", (path) => expect(isConsoleLocation(path)).toBe(false));
  it("redacts the tokens of invitation and console-link paths for the request log", () => {
    expect(redactConsolePath("/console/link/abc")).toBe("/console/link/[redacted]");
    expect(redactConsolePath("/console/invitation/abc")).toBe("/console/invitation/[redacted]");
    expect(redactConsolePath("/console/users")).toBe("/console/users");
  });
});
