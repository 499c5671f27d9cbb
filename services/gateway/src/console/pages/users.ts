import { ConsoleUserExistsError, inviteConsoleUser, type ConsoleUser } from "../../db/console-store.js";
import { consoleEmailOf, consoleRoles, isConsoleRole, type ConsoleRole } from "../../domain/console-role.js";
import { html, type SafeHtml } from "../html.js";
import { csrfField, time } from "../layout.js";
import { ConsolePageError } from "../page-error.js";
import {
  consoleOriginOf,
  page,
  redirect,
  type ConsoleDeps,
  type SignedInConsoleRoute,
  type SignedInRequest,
} from "../route.js";

const statusOf = (user: ConsoleUser) => (user.disabledAt ? "disabled" : user.hasPassword ? "active" : "invited");

function roleOptions(selected: ConsoleRole): SafeHtml {
  return html`${consoleRoles.map((role) =>
    role === selected
      ? html`<option value="${role}" selected>${role}</option>`
      : html`<option value="${role}">${role}</option>`,
  )}`;
}

function userRow(user: ConsoleUser, request: SignedInRequest): SafeHtml {
  const self = user.userId === request.viewer.userId;
  const actions = user.disabledAt
    ? html`<span class="muted">disabled ${time(user.disabledAt)}</span>`
    : self
      ? html`<span class="muted">you (another owner changes your account)</span>`
      : html`<form class="inline" method="post" action="/console/users/${user.userId}/role">
            ${csrfField(request.csrfToken)}
            <label for="role-${user.userId}">Role of ${user.email}</label>
            <select id="role-${user.userId}" name="role">
              ${roleOptions(user.role)}
            </select>
            <button type="submit">Change role</button>
          </form>
          <form class="inline" method="post" action="/console/users/${user.userId}/disable">
            ${csrfField(request.csrfToken)}
            <button type="submit" class="danger" aria-label="Disable ${user.email}">Disable</button>
          </form>`;
  return html`<tr>
    <td>${user.email}</td>
    <td>${user.role}</td>
    <td>${statusOf(user)}</td>
    <td>${time(user.createdAt)}</td>
    <td>${actions}</td>
  </tr>`;
}

function inviteForm(request: SignedInRequest, values = { email: "", role: "viewer" }, error?: string): SafeHtml {
  return html`<form class="stacked" method="post" action="/console/users">
    ${csrfField(request.csrfToken)}
    <label for="invite-email">Email</label>
    <input
      id="invite-email"
      name="email"
      type="email"
      required
      autocomplete="off"
      value="${values.email}"
      aria-describedby="invite-help"
      aria-invalid="${error ? "true" : "false"}"
    />
    <p id="invite-help" class="${error ? "field-error" : "muted"}">
      ${error ?? "They set their password from the link."}
    </p>
    <label for="invite-role">Role</label>
    <select id="invite-role" name="role">
      ${roleOptions(isConsoleRole(values.role) ? values.role : "viewer")}
    </select>
    <button type="submit">Invite</button>
  </form>`;
}

async function usersPage(
  request: SignedInRequest,
  deps: ConsoleDeps,
  options: { status?: number; invite?: { email: string; role: string }; error?: string; before?: SafeHtml } = {},
) {
  const users = await deps.store.listUsers(request.viewer.tenantId);
  return page(
    "Users",
    html`${options.before}
      <section aria-labelledby="users-heading">
        <h2 id="users-heading">Console users of this tenant</h2>
        <div class="table-scroll" tabindex="0" role="region" aria-label="Console users table">
          <table aria-labelledby="users-heading">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              ${users.map((user) => userRow(user, request))}
            </tbody>
          </table>
        </div>
      </section>
      <section aria-labelledby="invite-heading">
        <h2 id="invite-heading">Invite a user</h2>
        <p>The invitation link is shown once, here, after you invite: send it to the user yourself.</p>
        ${inviteForm(request, options.invite, options.error)}
      </section>`,
    { status: options.status },
  );
}

/** A user of the viewer's tenant, other than the viewer; a user of another tenant is not found. */
async function otherUser(request: SignedInRequest, deps: ConsoleDeps): Promise<ConsoleUser> {
  const user = await deps.store.findUser(request.param("userId"));
  if (!user || user.tenantId !== request.viewer.tenantId) {
    throw new ConsolePageError(404, "Not found", "This tenant has no such console user.");
  }
  if (user.userId === request.viewer.userId) {
    throw new ConsolePageError(409, "Not allowed", "You cannot change your own account; another owner can.");
  }
  return user;
}

/** The tenant's console users (owners only): list, invite, change role, disable. */
export const userPages: SignedInConsoleRoute[] = [
  {
    method: "GET",
    path: "/console/users",
    role: "owner",
    summary: "The tenant's console users, and the invite form.",
    handle: (request, deps) => usersPage(request, deps),
  },
  {
    method: "POST",
    path: "/console/users",
    role: "owner",
    summary: "Invites a user: shows their one-time invitation link once, on the answer itself.",
    async handle(request, deps) {
      const invite = { email: request.form.get("email"), role: request.form.get("role") };
      const email = consoleEmailOf(invite.email);
      if (!email) return usersPage(request, deps, { status: 400, invite, error: "Enter an email address." });
      if (!isConsoleRole(invite.role)) {
        return usersPage(request, deps, { status: 400, invite, error: "Choose a role." });
      }
      try {
        const { user, token } = await inviteConsoleUser(deps.store, {
          tenantId: request.viewer.tenantId,
          email,
          role: invite.role,
          invitationTtlMs: deps.settings.invitationTtlMs,
        });
        const url = `${consoleOriginOf(request.ctx, deps.settings)}/console/invitation/${token}`;
        // Not a redirect: the link exists only in this answer (the store keeps its digest).
        return usersPage(request, deps, {
          status: 201,
          before: html`<div class="flash success" role="status">
            <p>${user.email} is invited as ${user.role}. Send them this one-time link; it is not shown again.</p>
            <p><label for="invitation-link">Invitation link (valid until ${time(user.invitationExpiresAt)})</label></p>
            <input id="invitation-link" class="invitation-link" type="text" readonly value="${url}" />
          </div>`,
        });
      } catch (error) {
        if (error instanceof ConsoleUserExistsError) {
          return usersPage(request, deps, { status: 409, invite, error: `${email} is already a user of this tenant.` });
        }
        throw error;
      }
    },
  },
  {
    method: "POST",
    path: "/console/users/:userId/role",
    role: "owner",
    summary: "Changes a user's role; it applies to their open sessions at once.",
    async handle(request, deps) {
      const user = await otherUser(request, deps);
      const role = request.form.get("role");
      if (!isConsoleRole(role)) throw new ConsolePageError(400, "Bad request", "Choose a role.");
      await deps.store.setRole(user.userId, role);
      return redirect("/console/users", { kind: "success", text: `${user.email} is now ${role}.` });
    },
  },
  {
    method: "POST",
    path: "/console/users/:userId/disable",
    role: "owner",
    summary: "Disables a user: their sessions end at once and they can no longer sign in.",
    async handle(request, deps) {
      const user = await otherUser(request, deps);
      const disabled = await deps.store.disableUser(user.userId);
      const ended = disabled?.sessionsEnded ?? 0;
      return redirect("/console/users", {
        kind: "success",
        text: `${user.email} is disabled; ${ended} open session${ended === 1 ? "" : "s"} ended.`,
      });
    },
  },
];
