import { createHash } from "node:crypto";
import type { ServiceProcess } from "@platform/local-stack/service-process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConsoleBrowser, pathOf } from "./console-browser.js";
import { startTestStack, type TestStack } from "./stack.js";

/**
 * The console's users and sessions end to end (issue 18 item 1): real gateway processes over real
 * Postgres, the admin CLI, a cookie-keeping client without automatic redirects. The gateway trusts
 * X-Forwarded-* (TRUST_PROXY), so each test signs in from an address of its own and the
 * per-address throttle of one test does not reach another.
 */
describe("console users and sessions", () => {
  let stack: TestStack;
  /** A second gateway on the same database with short limits (idle 2 s, absolute 5 s, links 1 s). */
  let shortLived: ServiceProcess;
  const tenant = "t_console";
  const otherTenant = "t_console_other";
  const password = "correct horse battery staple";
  let address = 0;
  const gatewayUrl = (gateway?: ServiceProcess) =>
    gateway ? `http://127.0.0.1:${gateway.listening.port as number}` : stack.url;
  const browser = (headers: Record<string, string> = {}, gateway?: ServiceProcess) =>
    new ConsoleBrowser(() => gatewayUrl(gateway), { "x-forwarded-for": `10.1.0.${++address}`, ...headers });

  /** Creates a user through the CLI and accepts the invitation: a signed-in browser, the user id. */
  async function signedInUser(email: string, role: string, tenantId = tenant, b = browser()) {
    const created = await stack.admin("user", "create", "--tenant", tenantId, "--email", email, "--role", role);
    const invitation = pathOf(created.invitationUrl as string);
    expect((await b.get(invitation)).status).toBe(200);
    const set = await b.post(invitation, { password, confirmation: password });
    expect(set.status).toBe(303);
    expect((await b.get("/console")).status).toBe(200); // the signed-in pages' CSRF token
    return { browser: b, id: created.id as string };
  }

  const signIn = (b: ConsoleBrowser, email: string, secret = password, tenantId = tenant) =>
    b.get("/console/login").then(() => b.post("/console/login", { tenant: tenantId, email, password: secret }));

  beforeAll(async () => {
    stack = await startTestStack({
      TRUST_PROXY: "true",
      CONSOLE_LOGIN_ACCOUNT_LIMIT: "3",
      CONSOLE_LOGIN_ADDRESS_LIMIT: "6",
    });
    shortLived = await stack.startGateway({
      TRUST_PROXY: "true",
      CONSOLE_SESSION_IDLE: "2s",
      CONSOLE_SESSION_ABSOLUTE: "5s",
      CONSOLE_LINK_TTL: "1s",
    });
    await stack.admin("tenant", "create", "--name", "Console tenant", "--id", tenant);
    await stack.admin("tenant", "create", "--name", "Other tenant", "--id", otherTenant);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("invitation -> set password -> session -> logout -> sign in again", async () => {
    const created = await stack.admin(
      "user",
      "create",
      "--tenant",
      tenant,
      "--email",
      "Owner@Example.com",
      "--role",
      "owner",
    );
    expect(created).toMatchObject({
      id: expect.stringMatching(/^usr_[0-9a-f]{24}$/) as string,
      tenant,
      email: "owner@example.com",
      role: "owner",
      passwordSet: false,
      invitationUrl: expect.stringMatching(/\/console\/invitation\/[A-Za-z0-9_-]{43}$/) as string,
    });
    const invitation = pathOf(created.invitationUrl as string);
    const b = browser();
    const form = await b.get(invitation);
    expect(form.status).toBe(200);
    expect(form.text).toContain("owner@example.com");
    expect(form.text).toMatch(/<label for="password">/);

    const short = await b.post(invitation, { password: "short", confirmation: "short" });
    expect(short.status).toBe(400);
    expect(short.text).toContain("at least 12 characters");
    const differ = await b.post(invitation, { password, confirmation: `${password}!` });
    expect(differ.status).toBe(400);

    const set = await b.post(invitation, { password, confirmation: password });
    expect(set.status).toBe(303);
    expect(set.location).toBe("/console");
    expect(b.cookies.has("console_session")).toBe(true);

    const home = await b.get("/console");
    expect(home.status).toBe(200);
    expect(home.text).toContain("Your password is set");
    expect(home.text).toContain("owner@example.com");
    expect(home.text).toContain("Console tenant");

    // The invitation is consumed; the CLI sees the password set.
    expect((await browser().get(invitation)).status).toBe(410);
    const listed = await stack.admin("user", "list", "--tenant", tenant);
    expect(listed.users).toContainEqual(expect.objectContaining({ email: "owner@example.com", passwordSet: true }));

    const out = await b.post("/console/logout");
    expect(out.status).toBe(303);
    expect(out.location).toBe("/console/login?signed_out=1");
    const after = await b.get("/console");
    expect(after.status).toBe(303);
    expect(after.location).toBe("/console/login");

    const signed = await signIn(b, "OWNER@example.com");
    expect(signed.status).toBe(303);
    expect(signed.location).toBe("/console");
    expect((await b.get("/console")).status).toBe(200);

    // A wrong password, an unknown account: the same 400 and message (no enumeration).
    const wrong = await signIn(browser(), "owner@example.com", "not the password at all");
    const unknown = await signIn(browser(), "nobody@example.com");
    expect([wrong.status, unknown.status]).toEqual([400, 400]);
    expect(wrong.text).toContain("The tenant id, email or password is wrong.");
    expect(unknown.text).toContain("The tenant id, email or password is wrong.");
  });

  it("the CLI refuses an unknown tenant, a bad role and a repeated email", async () => {
    const cli = (...args: string[]) =>
      stack.admin(...args).then(
        () => "ok",
        (e: { code: number }) => e.code,
      );
    expect(await cli("user", "create", "--tenant", "t_nope", "--email", "a@example.com", "--role", "viewer")).toBe(2);
    expect(await cli("user", "create", "--tenant", tenant, "--email", "a@example.com", "--role", "root")).toBe(2);
    expect(await cli("user", "create", "--tenant", tenant, "--email", "dup@example.com", "--role", "viewer")).toBe(
      "ok",
    );
    expect(await cli("user", "create", "--tenant", tenant, "--email", "DUP@example.com", "--role", "admin")).toBe(2);
    // The same email in another tenant is another user.
    expect(await cli("user", "create", "--tenant", otherTenant, "--email", "dup@example.com", "--role", "owner")).toBe(
      "ok",
    );
  });

  it("throttles failed sign-ins per account (429, Retry-After, a clear message), even with the right password", async () => {
    await signedInUser("throttled@example.com", "viewer");
    const b = browser();
    for (let i = 0; i < 3; i++) {
      expect((await signIn(b, "throttled@example.com", "wrong password number " + i)).status).toBe(400);
    }
    // From another address too: the limit is the account's.
    const refused = await signIn(browser(), "throttled@example.com");
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(800);
    expect(retryAfter).toBeLessThanOrEqual(900);
    expect(refused.text).toContain("Too many failed sign-in attempts for this account. Try again in 15 minutes.");
  });

  it("throttles sign-in attempts per client address across accounts (429, Retry-After)", async () => {
    const b = browser();
    for (let i = 0; i < 6; i++) {
      expect((await signIn(b, `spray-${i}@example.com`, "guess")).status).toBe(400);
    }
    const refused = await signIn(b, "spray-6@example.com", "guess");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.text).toContain("Too many sign-in attempts from your network.");
    // Another address is not refused.
    expect((await signIn(browser(), "spray-7@example.com", "guess")).status).toBe(400);
  });

  it("a good sign-in clears the account's count", async () => {
    await signedInUser("forgiven@example.com", "viewer");
    const b = browser();
    expect((await signIn(b, "forgiven@example.com", "wrong one")).status).toBe(400);
    expect((await signIn(b, "forgiven@example.com", "wrong two")).status).toBe(400);
    expect((await signIn(b, "forgiven@example.com")).status).toBe(303);
    const c = browser();
    expect((await signIn(c, "forgiven@example.com", "wrong three")).status).toBe(400);
    expect((await signIn(c, "forgiven@example.com", "wrong four")).status).toBe(400);
    expect((await signIn(c, "forgiven@example.com")).status).toBe(303);
  });

  it("ends a disabled user's sessions at once and refuses their sign-in", async () => {
    const { browser: b, id } = await signedInUser("disabled@example.com", "admin");
    const second = browser();
    expect((await signIn(second, "disabled@example.com")).status).toBe(303);
    expect((await b.get("/console")).status).toBe(200);
    const disabled = await stack.admin("user", "disable", "--id", id);
    expect(disabled).toMatchObject({ id, sessionsEnded: 2, disabledAt: expect.any(String) as string });
    for (const session of [b, second]) {
      const after = await session.get("/console");
      expect(after.status).toBe(303);
      expect(after.location).toBe("/console/login");
    }
    expect((await signIn(browser(), "disabled@example.com")).status).toBe(400);
  });

  it("ends a session after the idle timeout", async () => {
    const b = browser({}, shortLived);
    await signedInUser("idle@example.com", "viewer", tenant, b);
    expect((await b.get("/console")).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_600));
    const after = await b.get("/console");
    expect(after.status).toBe(303);
    expect(after.location).toBe("/console/login");
    // Ended for good: the default gateway (30 min idle) does not take it back.
    const cookie = b.cookies.get("console_session");
    expect(cookie).toBeUndefined();
  });

  it("ends a session after the absolute timeout, however active", async () => {
    const b = browser({}, shortLived);
    await signedInUser("absolute@example.com", "viewer", tenant, b);
    const started = Date.now();
    const session = b.cookies.get("console_session")!;
    while (Date.now() - started < 4_000) {
      expect((await b.get("/console")).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    await new Promise((resolve) => setTimeout(resolve, 5_300 - (Date.now() - started)));
    expect((await b.get("/console")).status).toBe(303);
    // The same id on the long-lived gateway is ended too.
    const replay = new ConsoleBrowser(() => stack.url);
    replay.cookies.set("console_session", session);
    expect((await replay.get("/console")).status).toBe(303);
  });

  it("refuses unsafe requests without the session's CSRF token or from another origin or site (403)", async () => {
    const { browser: b } = await signedInUser("csrf@example.com", "viewer");
    expect((await b.get("/console")).status).toBe(200);
    expect((await b.post("/console/logout", { _csrf: "" })).status).toBe(403);
    expect((await b.post("/console/logout", { _csrf: "forged-token" })).status).toBe(403);
    // The token of another session is no good either.
    const { browser: other } = await signedInUser("csrf-other@example.com", "viewer");
    expect((await b.post("/console/logout", { _csrf: other.csrf })).status).toBe(403);
    expect((await b.post("/console/logout", {}, { origin: "https://evil.example" })).status).toBe(403);
    expect((await b.post("/console/logout", {}, { origin: "null" })).status).toBe(403);
    expect((await b.post("/console/logout", {}, { "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await b.post("/console/logout", {}, { "sec-fetch-site": "same-site" })).status).toBe(403);
    // The sign-in form is protected the same way (login CSRF).
    const visitor = browser();
    await visitor.get("/console/login");
    const form = { tenant, email: "csrf@example.com", password };
    expect((await visitor.post("/console/login", { ...form, _csrf: "" })).status).toBe(403);
    expect((await visitor.post("/console/login", form, { origin: "https://evil.example" })).status).toBe(403);
    // Still signed in after all that; the header works as well as the field (htmx).
    expect((await b.get("/console")).status).toBe(200);
    const viaHeader = await b.request("POST", "/console/logout", {
      headers: { "x-csrf-token": b.csrf, origin: new URL(stack.url).origin },
    });
    expect(viaHeader.status).toBe(303);
    expect((await b.get("/console")).status).toBe(303);
  });

  it("never keeps a session id from before sign-in (fixation)", async () => {
    // An attacker's own live session, planted in the victim's browser...
    const { browser: attacker } = await signedInUser("attacker@example.com", "viewer");
    const planted = attacker.cookies.get("console_session")!;
    await signedInUser("victim@example.com", "owner");
    const victim = browser();
    victim.cookies.set("console_session", planted);
    // (the victim's page is the attacker's session's, so its form carries that session's token)
    expect((await victim.get("/console")).text).toContain("attacker@example.com");
    const signedIn = await victim.post("/console/login", { tenant, email: "victim@example.com", password });
    expect(signedIn.status).toBe(303);
    const after = victim.cookies.get("console_session")!;
    expect(after).not.toBe(planted);
    expect((await victim.get("/console")).text).toContain("victim@example.com");
    expect((await attacker.get("/console")).status).toBe(303);

    const madeUp = browser();
    madeUp.cookies.set("console_session", "A".repeat(43));
    expect((await madeUp.get("/console")).status).toBe(303);
    expect((await signIn(madeUp, "victim@example.com")).status).toBe(303);
    expect(madeUp.cookies.get("console_session")).not.toBe("A".repeat(43));
  });

  it("over HTTPS (X-Forwarded-Proto from a trusted proxy) the cookies are __Host- and Secure, with HSTS", async () => {
    const https = browser({ "x-forwarded-proto": "https" });
    await signedInUser("https@example.com", "viewer", tenant, https);
    const session = https.setCookies.find((line) => line.startsWith("__Host-console_session="));
    expect(session).toBeDefined();
    expect(session!.toLowerCase().split("; ").slice(1).sort()).toEqual([
      "httponly",
      "path=/",
      "samesite=lax",
      "secure",
    ]);
    expect(https.setCookies.some((line) => line.startsWith("console_session="))).toBe(false);
    const home = await https.get("/console");
    expect(home.status).toBe(200);
    expect(home.headers.get("strict-transport-security")).toBe("max-age=31536000; includeSubDomains");

    // Plain HTTP: no prefix, no Secure; a gateway that does not trust its proxy ignores the header.
    const plain = browser();
    await signedInUser("http@example.com", "viewer", tenant, plain);
    const cookie = plain.setCookies.find((line) => line.startsWith("console_session="))!;
    expect(cookie.toLowerCase().split("; ").slice(1).sort()).toEqual(["httponly", "path=/", "samesite=lax"]);
    const untrusted = await stack.startGateway({});
    const spoofed = new ConsoleBrowser(() => gatewayUrl(untrusted), { "x-forwarded-proto": "https" });
    await spoofed.get("/console/login");
    expect(spoofed.setCookies.every((line) => line.startsWith("console_visitor="))).toBe(true);
    expect((await spoofed.get("/console/login")).headers.get("strict-transport-security")).toBeNull();
  });

  it("answers every page with the security headers, a CSP without unsafe-inline and no inline script or style", async () => {
    const { browser: b } = await signedInUser("headers@example.com", "owner");
    const pages = [await b.get("/console"), await b.get("/console/users"), await browser().get("/console/login")];
    pages.push(await b.get("/console/nothing-here"));
    expect(pages.map((p) => p.status)).toEqual([200, 200, 200, 404]);
    for (const page of pages) {
      const csp = page.headers.get("content-security-policy")!;
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe-inline");
      expect(csp).not.toContain("unsafe-eval");
      expect(page.headers.get("x-content-type-options")).toBe("nosniff");
      expect(page.headers.get("referrer-policy")).toBe("same-origin");
      expect(page.headers.get("x-frame-options")).toBe("DENY");
      expect(page.headers.get("cache-control")).toBe("no-store");
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
      // Every <script> has a src (no inline script), no inline handlers or styles.
      expect(page.text.match(/<script\b[^>]*>/g)?.every((tag) => / src="\/console\/assets\//.test(tag))).toBe(true);
      expect(page.text).not.toMatch(/<script\b[^>]*>\s*[^<\s]/);
      expect(page.text).not.toMatch(/\son[a-z]+=|\sstyle=|<style/i);
    }
    // The assets: content-addressed, cached for a year, their integrity matching their bytes.
    const tags = [...pages[0]!.text.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"\s+integrity="([^"]+)"/g)];
    expect(tags.map(([, path]) => path!.split("/").pop())).toEqual([
      "console-style.css",
      "htmx.min.js",
      "console-script.js",
    ]);
    for (const [, path, integrity] of tags) {
      const res = await fetch(`${stack.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(`sha384-${createHash("sha384").update(bytes).digest("base64")}`).toBe(integrity);
    }
  });

  it("refuses a route above the user's role with 403, whatever the page shows", async () => {
    const { browser: viewer } = await signedInUser("viewer@example.com", "viewer");
    const { browser: admin } = await signedInUser("admin@example.com", "admin");
    expect((await viewer.get("/console")).text).not.toContain('href="/console/users"');
    for (const b of [viewer, admin]) {
      expect((await b.get("/console/users")).status).toBe(403);
      const post = await b.post("/console/users", { email: "sneaky@example.com", role: "owner" });
      expect(post.status).toBe(403);
      expect(post.text).toContain("This needs the owner role");
    }
    const listed = await stack.admin("user", "list", "--tenant", tenant);
    expect(JSON.stringify(listed)).not.toContain("sneaky@example.com");
  });

  it("lets an owner invite and disable users of the tenant, and shows nothing of another tenant", async () => {
    const { browser: owner } = await signedInUser("boss@example.com", "owner");
    const { browser: otherOwner } = await signedInUser("boss@other.example", "owner", otherTenant);
    const invited = await owner.post("/console/users", { email: "New.Hire@example.com", role: "admin" });
    expect(invited.status).toBe(201);
    const link = /value="(https?:\/\/[^"]+\/console\/invitation\/[A-Za-z0-9_-]{43})"/.exec(invited.text)![1]!;
    const hire = browser();
    expect((await hire.get(pathOf(link))).status).toBe(200);
    expect((await hire.post(pathOf(link), { password, confirmation: password })).status).toBe(303);
    expect((await hire.get("/console")).text).toContain("new.hire@example.com");

    const users = await owner.get("/console/users");
    expect(users.text).toContain("new.hire@example.com");
    expect(users.text).not.toContain("boss@other.example");
    const others = await otherOwner.get("/console/users");
    expect(others.text).toContain("boss@other.example");
    expect(others.text).not.toContain("new.hire@example.com");
    expect(others.text).not.toContain("boss@example.com");
    expect((await otherOwner.get("/console")).text).toContain("Other tenant");

    const hireId = (await stack.admin("user", "list", "--tenant", tenant)).users as { id: string; email: string }[];
    const id = hireId.find((u) => u.email === "new.hire@example.com")!.id;
    // Another tenant's owner cannot disable this tenant's user: 404, and nothing changes.
    expect((await otherOwner.post(`/console/users/${id}/disable`)).status).toBe(404);
    expect((await hire.get("/console")).status).toBe(200);
    const disabled = await owner.post(`/console/users/${id}/disable`);
    expect(disabled.status).toBe(303);
    expect((await owner.get("/console/users")).text).toContain("new.hire@example.com is disabled");
    expect((await hire.get("/console")).status).toBe(303);
  });

  describe("console links", () => {
    let manager: string;
    let reader: string;
    let userId: string;
    let otherUserId: string;
    const mint = (
      body: unknown,
      key = manager,
      idempotencyKey = `link-${Math.random().toString(36).slice(2)}`,
      gateway?: ServiceProcess,
    ) =>
      fetch(`${gatewayUrl(gateway)}/api/v1/tenants/${tenant}/console-links`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
          "idempotency-key": idempotencyKey,
        },
        body: JSON.stringify(body),
      }).then(async (res) => ({ res, body: (await res.json()) as Record<string, string> }));

    beforeAll(async () => {
      manager = (
        await stack.admin("key", "create", "--tenants", `${tenant},${otherTenant}`, "--scopes", "tenant:manage")
      ).key as string;
      reader = (await stack.admin("key", "create", "--tenants", tenant, "--scopes", "tenant:read")).key as string;
      userId = (await signedInUser("linked@example.com", "admin")).id;
      otherUserId = (await signedInUser("linked@other.example", "admin", otherTenant)).id;
    });

    it("mints a single-use link with tenant:manage; opening it signs in and redirects to a clean URL", async () => {
      const { res, body } = await mint({ userId, redirectPath: "/console?from=partner" }, manager, "link-first-use");
      expect(res.status).toBe(201);
      expect(body).toEqual({
        id: expect.stringMatching(/^cl_[0-9a-f]{24}$/) as string,
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/console\/link\/[A-Za-z0-9_-]{43}$/) as string,
        expiresAt: expect.any(String) as string,
      });
      const ttl = new Date(body.expiresAt!).getTime() - Date.now();
      expect(ttl).toBeGreaterThan(4 * 60_000);
      expect(ttl).toBeLessThanOrEqual(5 * 60_000);
      // A repeat with the same Idempotency-Key answers the same link.
      const again = await mint({ userId, redirectPath: "/console?from=partner" }, manager, "link-first-use");
      expect(again.res.status).toBe(201);
      expect(again.res.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body).toEqual(body);
      expect((await mint({ email: "linked@example.com" }, manager, "link-first-use")).res.status).toBe(422);

      const b = browser();
      const token = body.url!.split("/").pop()!;
      // A HEAD (a link checker) does not use it up.
      expect((await b.request("HEAD", pathOf(body.url!))).status).toBe(200);
      expect(b.cookies.has("console_session")).toBe(false);
      const opened = await b.get(pathOf(body.url!));
      expect(opened.status).toBe(303);
      expect(opened.location).toBe("/console?from=partner");
      expect(opened.headers.get("referrer-policy")).toBe("same-origin");
      const home = await b.get(opened.location);
      expect(home.status).toBe(200);
      expect(home.text).toContain("linked@example.com");

      // Single use: the second opening is refused with a page saying so, and signs nobody in.
      const reused = browser();
      const second = await reused.get(pathOf(body.url!));
      expect(second.status).toBe(410);
      expect(second.text).toContain("This console link was already used");
      expect(reused.cookies.has("console_session")).toBe(false);

      // The token never reaches the gateway's logs.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const logs = JSON.stringify(stack.gateway.logs);
      expect(logs).not.toContain(token);
      expect(logs).toContain("/console/link/[redacted]");
    });

    it("names the user by email, refuses another tenant's user (404) and a key without tenant:manage (403)", async () => {
      expect((await mint({ email: "LINKED@example.com" })).res.status).toBe(201);
      const foreign = await mint({ userId: otherUserId });
      expect(foreign.res.status).toBe(404);
      expect(foreign.body.code).toBe("console.user_not_found");
      expect((await mint({ email: "linked@other.example" })).body.code).toBe("console.user_not_found");
      const unscoped = await mint({ userId }, reader);
      expect(unscoped.res.status).toBe(403);
      expect(unscoped.body.code).toBe("auth.scope_missing");
      const invalid = await mint({ userId, email: "linked@example.com", redirectPath: "https://evil.example/" });
      expect(invalid.res.status).toBe(400);
      expect(invalid.body.code).toBe("console.link_invalid");
      expect(invalid.body.detail).toContain("redirectPath must be a path under /console");
    });

    it("refuses an expired link (410) and a link of a disabled user (409 at minting)", async () => {
      const { res, body } = await mint({ userId }, manager, undefined, shortLived);
      expect(res.status).toBe(201);
      await new Promise((resolve) => setTimeout(resolve, 1_300));
      const b = browser();
      const expired = await b.get(pathOf(body.url!));
      expect(expired.status).toBe(410);
      expect(expired.text).toContain("This console link has expired");
      expect(b.cookies.has("console_session")).toBe(false);
      expect((await browser().get("/console/link/not-a-token")).status).toBe(404);

      const { id } = await signedInUser("gone@example.com", "viewer");
      await stack.admin("user", "disable", "--id", id);
      const refused = await mint({ userId: id });
      expect(refused.res.status).toBe(409);
      expect(refused.body.code).toBe("console.user_disabled");
    });
  });

  it("keeps invitation tokens out of the gateway's logs", async () => {
    const created = await stack.admin(
      "user",
      "create",
      "--tenant",
      tenant,
      "--email",
      "logged@example.com",
      "--role",
      "viewer",
    );
    const token = (created.invitationUrl as string).split("/").pop()!;
    const b = browser();
    await b.get(pathOf(created.invitationUrl as string));
    await b.post(pathOf(created.invitationUrl as string), { password, confirmation: password });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const logs = JSON.stringify(stack.gateway.logs);
    expect(logs).not.toContain(token);
    expect(logs).toContain("/console/invitation/[redacted]");
  });
});
