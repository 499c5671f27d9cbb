import { ConsoleUserExistsError, type ConsoleUser } from "../../db/console-store.js";
import { consoleRoles, isConsoleRole, type ConsoleViewer } from "../../domain/console-role.js";
import { digestConsoleToken, issueConsoleToken } from "../../domain/console-token.js";
import { html, raw, type SafeHtml } from "../html.js";
import { csrfField, time } from "../layout.js";
import { ConsolePageError } from "../page-error.js";
import {
  consoleOriginOf,
  page,
  redirect,
  type ConsoleDeps,
  type ConsoleRoute,
  type SignedInRequest,
} from "../route.js";

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function usersTable(users: ConsoleUser[], viewer: ConsoleViewer, csrfToken: string): SafeHtml {
  return html`<table>
    <caption>
      Console users of this tenant
    </caption>
    <thead>
      <tr>
        <th scope="col">Email</th>
        <th scope="col">Role</th>
        <th scope="col">Status</th>
        <th scope="col">Created</th>
        <th scope="col"><span class="visually-hidden">Actions</span></th>
      </tr>
    </thead>
    <tbody>
      ${users.map(
        (user) =>
          html`<tr>
            <td>${user.email}</td>
            <td>${user.role}</td>
            <td>${user.disabledAt ? "disabled" : user.hasPassword ? "active" : "invited"}</td>
            <td>${time(user.createdAt)}</td>
            <td>
              ${
                !user.disabledAt &&
                user.userId !== viewer.userId &&
                html`<form method="post" action="/console/users/${user.userId}/disable">
                  ${csrfField(csrfToken)}
                  <button type="submit" class="danger" aria-label="Disable ${user.email}">Disable</button>
                </form>`
              }
            </td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

function inviteForm(csrfToken: string, entered: { email: string; role: string }, error?: string): SafeHtml {
  return html`<h2 id="invite-heading">Invite a user</h2>
    ${error && html`<p class="flash error" role="alert">${error}</p>`}
    <form class="stacked" method="post" action="/console/users" aria-labelledby="invite-heading">
      ${csrfField(csrfToken)}
      <label for="invite-email">Email</label>
      <input id="invite-email" name="email" type="email" required value="${entered.email}" />
      <label for="invite-role">Role</label>
      <select id="invite-role" name="role">
        ${consoleRoles.map(
          (role) => html`<option value="${role}" ${role === entered.role && raw("selected")}>${role}</option>`,
        )}
      </select>
      <button type="submit">Create the invitation</button>
    </form>`;
}

async function usersPage(
  request: SignedInRequest,
  deps: ConsoleDeps,
  entered = { email: "", role: "viewer" },
  error?: string,
) {
  const users = await deps.store.listUsers(request.viewer.tenantId);
  return html`${usersTable(users, request.viewer, request.csrfToken)} ${inviteForm(request.csrfToken, entered, error)}`;
}

/** The tenant's console users, for owners: list, invite (a one-time link shown once), disable. */
export const userRoutes: ConsoleRoute[] = [
  {
    method: "GET",
    path: "/console/users",
    role: "owner",
    summary: "The tenant's console users and the invitation form.",
    async handle(request, deps) {
      return page("Users", await usersPage(request, deps));
    },
  },
  {
    method: "POST",
    path: "/console/users",
    role: "owner",
    summary: "Invites a user: shows the one-time invitation link once (not redirected, so it is never stored).",
    async handle(request, deps) {
      const entered = { email: request.form.get("email").trim().toLowerCase(), role: request.form.get("role") };
      const refuse = async (error: string) =>
        page("Users", await usersPage(request, deps, entered, error), { status: 400 });
      if (!EMAIL.test(entered.email)) return refuse("Enter an email address.");
      if (!isConsoleRole(entered.role)) return refuse(`Choose a role: ${consoleRoles.join(", ")}.`);
      const token = issueConsoleToken();
      try {
        const user = await deps.store.createUser({
          tenantId: request.viewer.tenantId,
          email: entered.email,
          role: entered.role,
          invitationDigest: digestConsoleToken(token),
          invitationTtlMs: deps.settings.invitationTtlMs,
        });
        request.ctx.state.logger.info(
          { actor: request.call.actor, userId: user.userId, role: user.role },
          "console user invited",
        );
        const url = `${consoleOriginOf(request.ctx, deps.settings)}/console/invitation/${token}`;
        return page(
          "User invited",
          html`<p>
              Send this link to <strong>${user.email}</strong> (${user.role}). It is shown only now, works once and
              expires ${time(user.invitationExpiresAt)}.
            </p>
            <p><label for="invitation-url">Invitation link</label></p>
            <p><input id="invitation-url" readonly value="${url}" size="80" /></p>
            <p><a href="/console/users">Back to the users</a></p>`,
          { status: 201 },
        );
      } catch (error) {
        if (error instanceof ConsoleUserExistsError) return refuse("This tenant already has a user with this email.");
        throw error;
      }
    },
  },
  {
    method: "POST",
    path: "/console/users/:userId/disable",
    role: "owner",
    summary: "Disables a user of the tenant: their sessions end at once.",
    async handle(request, deps) {
      const user = await deps.store.findUser(request.param("userId"));
      if (!user || user.tenantId !== request.viewer.tenantId) {
        throw new ConsolePageError(404, "Not found", "This tenant has no such console user.");
      }
      if (user.userId === request.viewer.userId) {
        throw new ConsolePageError(409, "Not allowed", "You cannot disable yourself; ask another owner.");
      }
      const disabled = await deps.store.disableUser(user.userId);
      request.ctx.state.logger.info(
        { actor: request.call.actor, userId: user.userId, sessionsEnded: disabled?.sessionsEnded },
        "console user disabled",
      );
      return redirect("/console/users", { kind: "success", text: `${user.email} is disabled; their sessions ended.` });
    },
  },
];
