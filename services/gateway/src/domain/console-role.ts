import type { Scope } from "./api-key.js";

/**
 * Console roles (issue 18). A console user belongs to one tenant with one role; each role is the
 * one below it plus more, so a route names the least role it needs:
 * - viewer: reads;
 * - admin: reads and manages webhooks;
 * - owner: everything, and manages the tenant's console users.
 */
export const consoleRoles = ["viewer", "admin", "owner"] as const;
export type ConsoleRole = (typeof consoleRoles)[number];

export function isConsoleRole(value: string): value is ConsoleRole {
  return (consoleRoles as readonly string[]).includes(value);
}

/**
 * The API scopes a role carries. A console page acts through the same gRPC calls as the API, and
 * the console's router refuses (403) a route whose least role the user lacks, so a role holds
 * exactly what an API key with these scopes could do on the tenant.
 */
export const scopesOfRole: Readonly<Record<ConsoleRole, readonly Scope[]>> = {
  viewer: ["tenant:read"],
  admin: ["tenant:read", "webhook:manage"],
  owner: ["tenant:read", "webhook:manage", "usage:manage", "tenant:manage"],
};

/** True when `role` is `least` or above it. */
export function roleReaches(role: ConsoleRole, least: ConsoleRole): boolean {
  return consoleRoles.indexOf(role) >= consoleRoles.indexOf(least);
}

/** True when the role carries the API scope. */
export function roleHasScope(role: ConsoleRole, scope: Scope): boolean {
  return scopesOfRole[role].includes(scope);
}

/** The signed-in console user, as every console page sees them. */
export interface ConsoleViewer {
  userId: string;
  tenantId: string;
  email: string;
  role: ConsoleRole;
}

/**
 * Who a console action is attributed to in the gRPC calls it makes (and so in the activity feed):
 * `console:<userId>`. The user id is stable; the email is shown beside it on the console's pages.
 */
export const consoleActorOf = (viewer: Pick<ConsoleViewer, "userId">): string => `console:${viewer.userId}`;

/** Enough to catch a typo; the invitation proves the address. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** A console user's email as stored (trimmed, lower case), or undefined when it is not an email address. */
export function consoleEmailOf(input: string): string | undefined {
  const email = input.trim().toLowerCase();
  return EMAIL.test(email) ? email : undefined;
}
