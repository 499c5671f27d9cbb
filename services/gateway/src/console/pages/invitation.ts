import { hashPassword, PASSWORD_MIN_LENGTH, passwordProblem } from "../../domain/console-password.js";
import { digestConsoleToken, isConsoleToken } from "../../domain/console-token.js";
import { html, type SafeHtml } from "../html.js";
import { csrfField } from "../layout.js";
import { ConsolePageError } from "../page-error.js";
import { page, redirect, type ConsoleRoute, type PublicRequest } from "../route.js";

const notValid = () =>
  new ConsolePageError(
    410,
    "Invitation no longer valid",
    "This invitation link was already used, has expired or was replaced by a newer one. Ask your tenant's owner or the operator for a new invitation.",
  );

/** The invitation's token, or a 404 page for anything that is not one. */
function tokenOf(request: PublicRequest): string {
  const token = request.param("token");
  if (!isConsoleToken(token)) throw new ConsolePageError(404, "Not found", "This invitation link is not valid.");
  return token;
}

function setPasswordForm(request: PublicRequest, email: string, tenantId: string, error?: string): SafeHtml {
  return html`<p>Choose a password for <strong>${email}</strong> (tenant <code>${tenantId}</code>).</p>
    ${error && html`<p class="flash error" role="alert">${error}</p>`}
    <form class="stacked" method="post" action="${request.ctx.path}">
      ${csrfField(request.csrfToken)}
      <label for="username">Email (your user name)</label>
      <input id="username" name="username" type="email" readonly autocomplete="username" value="${email}" />
      <label for="password">New password (at least ${PASSWORD_MIN_LENGTH} characters)</label>
      <input
        id="password"
        name="password"
        type="password"
        required
        minlength="${PASSWORD_MIN_LENGTH}"
        autocomplete="new-password"
      />
      <label for="confirmation">The same password again</label>
      <input id="confirmation" name="confirmation" type="password" required autocomplete="new-password" />
      <button type="submit">Set password and sign in</button>
    </form>`;
}

/**
 * The one-time invitation link of `admin user create`: set a password, which consumes the link
 * and signs the user in. The token is in the path: the request log shows it redacted.
 */
export const invitationPages: ConsoleRoute[] = [
  {
    method: "GET",
    path: "/console/invitation/:token",
    role: "public",
    secretParam: "token",
    summary: "The set-password form of an invitation.",
    async handle(request, deps) {
      const user = await deps.store.findInvitation(digestConsoleToken(tokenOf(request)));
      if (!user) throw notValid();
      return page("Set your password", setPasswordForm(request, user.email, user.tenantId));
    },
  },
  {
    method: "POST",
    path: "/console/invitation/:token",
    role: "public",
    secretParam: "token",
    summary: "Sets the password, consumes the invitation and signs in.",
    async handle(request, deps) {
      const digest = digestConsoleToken(tokenOf(request));
      const user = await deps.store.findInvitation(digest);
      if (!user) throw notValid();
      const password = request.form.get("password");
      const problem = passwordProblem(password, request.form.get("confirmation"));
      if (problem) {
        return page("Set your password", setPasswordForm(request, user.email, user.tenantId, problem), { status: 400 });
      }
      const viewer = await deps.store.acceptInvitation(digest, await hashPassword(password));
      if (!viewer) throw notValid();
      await request.session.signIn(viewer);
      return redirect("/console", { kind: "success", text: "Your password is set. You are signed in." });
    },
  },
];
