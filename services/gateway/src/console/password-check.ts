import type { ConsoleStore } from "../db/console-store.js";
import { decoyPasswordHash, verifyPassword } from "../domain/console-password.js";
import type { ConsoleViewer } from "../domain/console-role.js";
import type { ConsoleSettings } from "./route.js";

/**
 * The console's one rule for a typed password: signing in (pages/sign-in.ts) and confirming it is
 * you before a secret rotation (pages/webhook-endpoints.ts) both call `checkPassword`, so the
 * re-check is no way around the sign-in throttle.
 *
 * Every attempt counts against two keys before the password is looked at (parallel guesses cannot
 * slip past): the account (tenant and email, whether or not it exists) and the client address.
 * Over either limit (CONSOLE_LOGIN_*: the account's first) the attempt is throttled without a
 * verification. A missing account costs the same argon2 verification as a wrong password. A good
 * password clears the account's count and gives the address its attempt back.
 */

/** The throttle's keys. */
const accountThrottleKey = (tenantId: string, email: string) => `account:${tenantId}:${email}`;
const addressThrottleKey = (address: string) => `address:${address}`;

export interface PasswordAttempt {
  tenantId: string;
  /** As the account is stored: trimmed and lower-cased. */
  email: string;
  /** The client's address (`ctx.ip`: X-Forwarded-For only under TRUST_PROXY). */
  address: string;
  password: string;
  /** Re-authentication: the account must be this user's (the signed-in one). */
  userId?: string;
}

export type PasswordCheck =
  /** Over a limit: answer 429 with `headers` (Retry-After) and say to wait `minutesLeft`. */
  | {
      outcome: "throttled";
      limit: "account" | "address";
      minutesLeft: number;
      headers: { "retry-after": string };
    }
  /** A wrong password, or no such account (or not this user's). */
  | { outcome: "refused" }
  | { outcome: "verified"; viewer: ConsoleViewer };

export interface PasswordCheckDeps {
  store: Pick<ConsoleStore, "countAttempt" | "findCredentials" | "forgiveAttempt">;
  settings: Pick<ConsoleSettings, "login">;
}

export async function checkPassword(deps: PasswordCheckDeps, attempt: PasswordAttempt): Promise<PasswordCheck> {
  const { login } = deps.settings;
  const accountKey = accountThrottleKey(attempt.tenantId, attempt.email);
  const addressKey = addressThrottleKey(attempt.address);
  const counts = await deps.store.countAttempt([accountKey, addressKey], login.windowMs);
  const account = counts.find((c) => c.key === accountKey)!;
  const address = counts.find((c) => c.key === addressKey)!;
  const over =
    account.attempts > login.accountLimit
      ? { limit: "account" as const, count: account }
      : address.attempts > login.addressLimit
        ? { limit: "address" as const, count: address }
        : undefined;
  if (over) {
    const { windowLeftMs } = over.count;
    return {
      outcome: "throttled",
      limit: over.limit,
      minutesLeft: Math.max(1, Math.ceil(windowLeftMs / 60_000)),
      headers: { "retry-after": String(Math.max(1, Math.ceil(windowLeftMs / 1000))) },
    };
  }
  const credentials = await deps.store.findCredentials(attempt.tenantId, attempt.email);
  const verified = await verifyPassword(credentials?.passwordHash ?? (await decoyPasswordHash()), attempt.password);
  if (!credentials || !verified || (attempt.userId !== undefined && credentials.viewer.userId !== attempt.userId)) {
    return { outcome: "refused" };
  }
  await deps.store.forgiveAttempt(accountKey, addressKey);
  return { outcome: "verified", viewer: credentials.viewer };
}
