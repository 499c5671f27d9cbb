import {
  isConsoleLocation,
  page,
  redirect,
  type ConsoleDeps,
  type ConsoleRoute,
  type PublicRequest,
} from "../route.js";
import { html, type SafeHtml } from "../html.js";
import { csrfField } from "../layout.js";
import { checkPassword } from "../password-check.js";

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

const THROTTLED_TEXT = {
  account: "Too many failed sign-in attempts for this account.",
  address: "Too many sign-in attempts from your network.",
};

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
  const check = await checkPassword(deps, {
    tenantId: entered.tenant,
    email: entered.email,
    address: ctx.ip,
    password,
  });
  if (check.outcome === "throttled") {
    const { minutesLeft } = check;
    const error = `${THROTTLED_TEXT[check.limit]} Try again in ${minutesLeft} minute${minutesLeft === 1 ? "" : "s"}.`;
    return page("Sign in", signInPage(csrfToken, { ...entered, error }), { status: 429, headers: check.headers });
  }
  if (check.outcome === "refused") {
    const error = "The tenant id, email or password is wrong.";
    return page("Sign in", signInPage(csrfToken, { ...entered, error }), { status: 400 });
  }
  await request.session.signIn(check.viewer);
  return redirect(entered.next);
}

/** Sign in and sign out. */
export const signInPages: ConsoleRoute[] = [
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
