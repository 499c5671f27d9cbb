import { beforeAll, describe, expect, it } from "vitest";
import type { ThrottleCount } from "../db/console-store.js";
import { hashPassword } from "../domain/console-password.js";
import type { ConsoleViewer } from "../domain/console-role.js";
import { checkPassword, type PasswordAttempt, type PasswordCheckDeps } from "./password-check.js";

const viewer: ConsoleViewer = { userId: "usr_1", tenantId: "t_1", email: "ana@example.com", role: "admin" };
const login = { windowMs: 900_000, accountLimit: 5, addressLimit: 20 };
const attempt: PasswordAttempt = {
  tenantId: "t_1",
  email: "ana@example.com",
  address: "10.1.2.3",
  password: "the right password",
};
let passwordHash: string;
beforeAll(async () => {
  passwordHash = await hashPassword("the right password");
});

/** A store that answers the given counts (this attempt included) and records what it is asked. */
function fakeDeps(options: {
  account?: number;
  address?: number;
  accountLeftMs?: number;
  addressLeftMs?: number;
  credentials?: "none" | ConsoleViewer;
}) {
  const calls: unknown[][] = [];
  const deps: PasswordCheckDeps = {
    settings: { login },
    store: {
      countAttempt(keys: string[], windowMs: number): Promise<ThrottleCount[]> {
        calls.push(["countAttempt", keys, windowMs]);
        return Promise.resolve([
          { key: keys[0]!, attempts: options.account ?? 1, windowLeftMs: options.accountLeftMs ?? 900_000 },
          { key: keys[1]!, attempts: options.address ?? 1, windowLeftMs: options.addressLeftMs ?? 900_000 },
        ]);
      },
      findCredentials(tenantId: string, email: string) {
        calls.push(["findCredentials", tenantId, email]);
        const credentials = options.credentials ?? viewer;
        return Promise.resolve(credentials === "none" ? undefined : { viewer: credentials, passwordHash });
      },
      forgiveAttempt(accountKey: string, addressKey: string) {
        calls.push(["forgiveAttempt", accountKey, addressKey]);
        return Promise.resolve();
      },
    },
  };
  return { deps, calls };
}

const counted = ["countAttempt", ["account:t_1:ana@example.com", "address:10.1.2.3"], 900_000];

describe("checkPassword: the one rule for a typed password (sign-in, re-authentication)", () => {
  it("counts the attempt against the account and the address, verifies, then forgives it", async () => {
    const { deps, calls } = fakeDeps({ account: 5, address: 20 });
    expect(await checkPassword(deps, attempt)).toEqual({ outcome: "verified", viewer });
    expect(calls).toEqual([
      counted,
      ["findCredentials", "t_1", "ana@example.com"],
      ["forgiveAttempt", "account:t_1:ana@example.com", "address:10.1.2.3"],
    ]);
  });

  it("refuses a wrong password and an unknown account alike, and forgives nothing", async () => {
    for (const [options, password] of [
      [{}, "a wrong password"],
      [{ credentials: "none" as const }, attempt.password],
    ] as const) {
      const { deps, calls } = fakeDeps(options);
      expect(await checkPassword(deps, { ...attempt, password })).toEqual({ outcome: "refused" });
      expect(calls.map(([name]) => name)).toEqual(["countAttempt", "findCredentials"]);
    }
  });

  it("on re-authentication, refuses the right password of an account that is not the signed-in user's", async () => {
    const { deps, calls } = fakeDeps({ credentials: { ...viewer, userId: "usr_2" } });
    expect(await checkPassword(deps, { ...attempt, userId: "usr_1" })).toEqual({ outcome: "refused" });
    expect(calls.map(([name]) => name)).toEqual(["countAttempt", "findCredentials"]);
    const same = fakeDeps({});
    expect(await checkPassword(same.deps, { ...attempt, userId: "usr_1" })).toEqual({ outcome: "verified", viewer });
  });

  it("throttles over the account's limit first, then the address's, without looking at the password", async () => {
    const byAccount = fakeDeps({ account: 6, address: 21, accountLeftMs: 900_000 });
    expect(await checkPassword(byAccount.deps, attempt)).toEqual({
      outcome: "throttled",
      limit: "account",
      minutesLeft: 15,
      headers: { "retry-after": "900" },
    });
    expect(byAccount.calls).toEqual([counted]);
    const byAddress = fakeDeps({ account: 5, address: 21, addressLeftMs: 61_001 });
    expect(await checkPassword(byAddress.deps, attempt)).toEqual({
      outcome: "throttled",
      limit: "address",
      minutesLeft: 2,
      headers: { "retry-after": "62" },
    });
    expect(byAddress.calls).toEqual([counted]);
  });

  it("rounds the time left up, to at least one minute and one second", async () => {
    const almost = fakeDeps({ account: 6, accountLeftMs: 10 });
    expect(await checkPassword(almost.deps, attempt)).toMatchObject({
      minutesLeft: 1,
      headers: { "retry-after": "1" },
    });
    const minute = fakeDeps({ account: 6, accountLeftMs: 60_000 });
    expect(await checkPassword(minute.deps, attempt)).toMatchObject({
      minutesLeft: 1,
      headers: { "retry-after": "60" },
    });
  });
});
