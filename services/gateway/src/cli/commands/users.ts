/** Console users in the gateway's database (docs/console.md): created, re-invited, disabled, listed. */
import {
  CONSOLE_USER_ID_PATTERN,
  ConsoleUserExistsError,
  createConsoleStore,
  inviteConsoleUser,
  type ConsoleUser,
} from "../../db/console-store.js";
import type { GatewayConfig } from "../../config.js";
import { consoleEmailOf, consoleRoles, isConsoleRole } from "../../domain/console-role.js";
import { digestConsoleToken, issueConsoleToken } from "../../domain/console-token.js";
import { UsageError } from "../errors.js";
import { requireTenants } from "../reach-service.js";
import { adminCommand } from "../resources.js";

function userToJson(user: ConsoleUser) {
  return {
    id: user.userId,
    tenant: user.tenantId,
    email: user.email,
    role: user.role,
    createdAt: user.createdAt.toISOString(),
    disabledAt: user.disabledAt?.toISOString() ?? null,
    passwordSet: user.hasPassword,
  };
}

/** CONSOLE_BASE_URL, else the gateway's local URL (its HOST and PORT). */
function invitationUrl(config: GatewayConfig, token: string): string {
  const base = config.CONSOLE_BASE_URL ?? `http://${config.HOST}:${config.PORT}`;
  return `${base}/console/invitation/${token}`;
}

const userId = { id: { type: "string", required: true, value: "USER_ID" } } as const;

export const userCommands = [
  adminCommand({
    name: "user create",
    options: {
      tenant: { type: "string", required: true, value: "ID" },
      email: { type: "string", required: true, value: "E" },
      // Checked by the domain's isConsoleRole, which says "must be one of" (a choice would say "needs").
      role: { type: "string", required: true, value: "owner|admin|viewer" },
    },
    does:
      "creates a console user of the tenant and prints a one-time invitation URL to set a password " +
      "(valid CONSOLE_INVITATION_TTL, 7 days by default; under CONSOLE_BASE_URL, else the gateway's local URL)",
    async run({ tenant: tenantId, email: given, role }, resources) {
      if (!isConsoleRole(role)) throw new UsageError(`--role must be one of ${consoleRoles.join(", ")}`);
      const email = consoleEmailOf(given);
      if (!email) throw new UsageError(`--email ${given} is not an email address`);
      await requireTenants(resources, [tenantId]);
      const store = createConsoleStore(await resources.db());
      try {
        const { user, token } = await inviteConsoleUser(store, {
          tenantId,
          email,
          role,
          invitationTtlMs: resources.config.CONSOLE_INVITATION_TTL,
        });
        return {
          ...userToJson(user),
          invitationUrl: invitationUrl(resources.config, token),
          invitationExpiresAt: user.invitationExpiresAt.toISOString(),
        };
      } catch (error) {
        if (error instanceof ConsoleUserExistsError) throw new UsageError(error.message);
        throw error;
      }
    },
  }),
  adminCommand({
    name: "user invite",
    options: userId,
    does:
      "prints a new one-time invitation URL for an existing user (a forgotten password); the previous one stops " +
      "working, the password stays valid until the new one is set",
    async run({ id }, resources) {
      const store = createConsoleStore(await resources.db());
      const user = CONSOLE_USER_ID_PATTERN.test(id) ? await store.findUser(id) : undefined;
      if (!user) throw new UsageError(`no console user ${id}`);
      if (user.disabledAt) throw new UsageError(`console user ${id} is disabled`);
      const token = issueConsoleToken();
      const expiresAt = await store.reinvite(
        user.userId,
        digestConsoleToken(token),
        resources.config.CONSOLE_INVITATION_TTL,
      );
      return {
        ...userToJson(user),
        invitationUrl: invitationUrl(resources.config, token),
        invitationExpiresAt: expiresAt!.toISOString(),
      };
    },
  }),
  adminCommand({
    name: "user disable",
    options: userId,
    does: "disables a console user: every session of theirs ends at once and they can no longer sign in",
    async run({ id }, resources) {
      const store = createConsoleStore(await resources.db());
      const disabled = CONSOLE_USER_ID_PATTERN.test(id) ? await store.disableUser(id) : undefined;
      if (!disabled) throw new UsageError(`no console user ${id}`);
      return { ...userToJson(disabled.user), sessionsEnded: disabled.sessionsEnded };
    },
  }),
  adminCommand({
    name: "user list",
    options: { tenant: { type: "string", required: true, value: "ID" } },
    does: "lists the tenant's console users",
    async run({ tenant }, resources) {
      const users = await createConsoleStore(await resources.db()).listUsers(tenant);
      return { users: users.map(userToJson) };
    },
  }),
];
