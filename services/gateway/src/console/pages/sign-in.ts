import type { Context } from "koa";
import {
  isConsoleLocation,
  page,
  redirect,
  type ConsoleDeps,
  type ConsoleRoute,
  type PublicRequest,
} from "../route.js";
import { decoyPasswordHash, verifyPassword } from "../../domain/console-password.js";
import { html, type SafeHtml } from "../html.js";
import { csrfField } from "../layout.js";

/** Where to go after signing in: `next` when it is a console path, else the home page. */
const nextOf = (value: string) => (value !== "" && isConsoleLocation(value) ? value : "/console");

interface SignInForm {
  tenant: string;
  email: string;
  next: string;
  error?: string;
}

function signInPage(csrfToken: string, form: SignInForm, notice?: string): SafeHtml {
  return html`${notice && html`<p class="flash success" role="status">${notice}</p>`}
    ${form.error && html`<p class="flash error" role="alert" id="sign-in-error">${form.error}</p>`}
    <form class="stacked" method="post" action="/console/login">
      ${csrfField(csrfToken)}
      <input type="hidden" name="next" value="${form.next}" />
      <label for="tenant">Tenant id</label>
      <input id="tenant" name="tenant" required autocomplete="organization" value="${form.tenant}" />
      <label for="email">Email</label>
      <input id="email" name="email" type="email" required autocomplete="username" value="${form.email}" />
      <label for="password">Password</label>
      <input id="password" name="password" type="password" required autocomplete="current-password" />
      <button type="submit">Sign in</button>
    </form>`;
}

/** The throttle's keys: the account (tenant and email, whether or not it exists) and the client address. */
export const accountThrottleKey = (tenant: string, email: string) => `account:${tenant}:${email}`;
export const addressThrottleKey = (ctx: Context) => `address:${ctx.ip}`;

const minutes = (ms: number) => Math.max(1, Math.ceil(ms / 60_000));

async function signIn(request: PublicRequest, deps: ConsoleDeps) {
  const { ctx, form, csrfToken } = request;
  const entered: SignInForm = {
    tenant: form.get("tenant").trim(),
    email: form.get("email").trim().toLowerCase(),
    next: nextOf(form.get("next")),
  };
  const password = form.get("password");
  if (entered.tenant === "" || entered.email === "" || password === "") {
    return page(
      "Sign in",
      signInPage(csrfToken, { ...entered, error: "Enter the tenant id, your email and your password." }),
      {
        status: 400,
      },
    );
  }
  const { login } = deps.settings;
  const accountKey = accountThrottleKey(entered.tenant, entered.email);
  const addressKey = addressThrottleKey(ctx);
  const counts = await deps.store.countAttempt([accountKey, addressKey], login.windowMs);
  const account = counts.find((c) => c.key === accountKey)!;
  const address = counts.find((c) => c.key === addressKey)!;
  const over =
    account.attempts > login.accountLimit
      ? { count: account, text: "Too many failed sign-in attempts for this account." }
      : address.attempts > login.addressLimit
        ? { count: address, text: "Too many sign-in attempts from your network." }
        : undefined;
  if (over) {
    const retryAfter = Math.max(1, Math.ceil(over.count.windowLeftMs / 1000));
    const error = `${over.text} Try again in ${minutes(over.count.windowLeftMs)} minute${minutes(over.count.windowLeftMs) === 1 ? "" : "s"}.`;
    return page("Sign in", signInPage(csrfToken, { ...entered, error }), {
      status: 429,
      headers: { "retry-after": String(retryAfter) },
    });
  }
  const credentials = await deps.store.findCredentials(entered.tenant, entered.email);
  // A missing account costs the same argon2 verification as a wrong password.
  const verified = await verifyPassword(credentials?.passwordHash ?? (await decoyPasswordHash()), password);
  if (!credentials || !verified) {
    const error = "The tenant id, email or password is wrong.";
    return page("Sign in", signInPage(csrfToken, { ...entered, error }), { status: 400 });
  }
  await deps.store.forgiveAttempt(accountKey, addressKey);
  await request.session.signIn(credentials.viewer);
  return redirect(entered.next);
}

/** Sign in and sign out. */
export const signInRoutes: ConsoleRoute[] = [
  {
    method: "GET",
    path: "/console/login",
    role: "public",
    summary: "The sign-in form (tenant id, email, password).",
    // eslint-disable-next-line @typescript-eslint/require-await
    async handle({ ctx, viewer, csrfToken }) {
      const next = nextOf(typeof ctx.query.next === "string" ? ctx.query.next : "");
      if (viewer) return redirect(next);
      const tenant = typeof ctx.query.tenant === "string" ? ctx.query.tenant : "";
      const notice = ctx.query.signed_out === "1" ? "You are signed out." : undefined;
      return page("Sign in", signInPage(csrfToken, { tenant, email: "", next }, notice));
    },
  },
  {
    method: "POST",
    path: "/console/login",
    role: "public",
    summary: "Signs in: throttled per account and per address; a new session id every time.",
    handle: signIn,
  },
  {
    method: "POST",
    path: "/console/logout",
    role: "viewer",
    summary: "Ends the session at once.",
    async handle({ session }) {
      await session.signOut();
      return redirect("/console/login?signed_out=1");
    },
  },
];
