import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConsoleBrowser, pathOf } from "./console-browser.js";
import { startTestStack, type TestStack } from "./stack.js";

/**
 * The console's users and sessions end to end (issue 18 item 1): a real gateway process over
 * real Postgres, the admin CLI, a cookie-keeping client without automatic redirects.
 */
describe("console users and sessions", () => {
  let stack: TestStack;
  const tenant = "t_console";
  const password = "correct horse battery staple";
  const browser = (headers: Record<string, string> = {}) => new ConsoleBrowser(() => stack.url, headers);

  /** Creates a user through the CLI and accepts the invitation; answers the signed-in browser and the user id. */
  async function signedInUser(email: string, role: string, tenantId = tenant) {
    const created = await stack.admin("user", "create", "--tenant", tenantId, "--email", email, "--role", role);
    const b = browser();
    const form = await b.get(pathOf(created.invitationUrl as string));
    expect(form.status).toBe(200);
    const set = await b.post(pathOf(created.invitationUrl as string), { password, confirmation: password });
    expect(set.status).toBe(303);
    return { browser: b, id: created.id as string };
  }

  beforeAll(async () => {
    stack = await startTestStack();
    await stack.admin("tenant", "create", "--name", "Console tenant", "--id", tenant);
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

    const set = await b.post(invitation, { password, confirmation: password });
    expect(set.status).toBe(303);
    expect(set.location).toBe("/console");
    expect(b.cookies.has("console_session")).toBe(true);

    const home = await b.get("/console");
    expect(home.status).toBe(200);
    expect(home.text).toContain("Your password is set");
    expect(home.text).toContain("owner@example.com");
    expect(home.text).toContain("Console tenant");

    // The invitation is consumed.
    expect((await browser().get(invitation)).status).toBe(410);

    const out = await b.post("/console/logout");
    expect(out.status).toBe(303);
    expect(out.location).toBe("/console/login?signed_out=1");
    const after = await b.get("/console");
    expect(after.status).toBe(303);
    expect(after.location).toBe("/console/login");

    const login = await b.get("/console/login");
    expect(login.status).toBe(200);
    const signed = await b.post("/console/login", { tenant, email: "owner@example.com", password });
    expect(signed.status).toBe(303);
    expect(signed.location).toBe("/console");
    expect((await b.get("/console")).status).toBe(200);
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
    // The header works as well as the field (htmx).
    const viaHeader = await b.request("POST", "/console/logout", {
      headers: { "x-csrf-token": b.csrf, origin: new URL(stack.url).origin },
    });
    expect(viaHeader.status).toBe(303);
  });
});
