import { randomBytes } from "node:crypto";
import type { Knex } from "@platform/service-kit/postgres";
import type { ConsoleRole, ConsoleViewer } from "../domain/console-role.js";
import { digestConsoleToken, issueConsoleToken } from "../domain/console-token.js";

/**
 * Every SQL statement of the console (gateway schema, migration 20261125000000_create_console):
 * users and their invitations, server-side sessions, the login throttle and console links. Tokens
 * arrive here as SHA-256 digests only (domain/console-token.ts). Times are the database's clock.
 */

export interface ConsoleUser extends ConsoleViewer {
  createdAt: Date;
  disabledAt: Date | null;
  /** False until the invitation is accepted. */
  hasPassword: boolean;
}

interface UserRow {
  id: string;
  tenant_id: string;
  email: string;
  role: string;
  password_hash: string | null;
  created_at: Date;
  disabled_at: Date | null;
}

const toUser = (row: UserRow): ConsoleUser => ({
  userId: row.id,
  tenantId: row.tenant_id,
  email: row.email,
  role: row.role as ConsoleRole,
  createdAt: row.created_at,
  disabledAt: row.disabled_at,
  hasPassword: row.password_hash !== null,
});

const USER_COLUMNS = ["id", "tenant_id", "email", "role", "password_hash", "created_at", "disabled_at"];

/** A flash message: shown once, on the page after a redirect. */
export interface Flash {
  kind: "success" | "error";
  text: string;
}

/** A live session, as found by its cookie. */
export interface LiveSession {
  viewer: ConsoleViewer;
  createdAt: Date;
}

export type SessionEnd = "logout" | "idle" | "absolute" | "disabled" | "replaced";

export interface ThrottleCount {
  key: string;
  attempts: number;
  /** Milliseconds until the key's window ends. */
  windowLeftMs: number;
}

export type LinkConsumption =
  | { outcome: "consumed"; viewer: ConsoleViewer; redirectPath: string }
  | { outcome: "used" | "expired" | "unknown" | "disabled" };

/** A console user id: usr_ and 24 hex digits. */
export const newConsoleUserId = (): string => `usr_${randomBytes(12).toString("hex")}`;
export const CONSOLE_USER_ID_PATTERN = /^usr_[0-9a-f]{24}$/;

/** The tenant already has a user with this email. */
export class ConsoleUserExistsError extends Error {
  override name = "ConsoleUserExistsError";
}

const isUniqueViolation = (error: unknown) => (error as { code?: unknown }).code === "23505";
const ms = (value: number) => `${Math.max(0, Math.round(value))} milliseconds`;

export interface ConsoleStore {
  createUser(user: {
    tenantId: string;
    email: string;
    role: ConsoleRole;
    invitationDigest: Buffer;
    invitationTtlMs: number;
  }): Promise<ConsoleUser & { invitationExpiresAt: Date }>;
  /** A new invitation for an existing user (a forgotten password); undefined when no such user. */
  reinvite(userId: string, invitationDigest: Buffer, invitationTtlMs: number): Promise<Date | undefined>;
  findUser(userId: string): Promise<ConsoleUser | undefined>;
  findUserByEmail(tenantId: string, email: string): Promise<ConsoleUser | undefined>;
  /** The password hash of an enabled user with a password, by tenant and email. */
  findCredentials(
    tenantId: string,
    email: string,
  ): Promise<{ viewer: ConsoleViewer; passwordHash: string } | undefined>;
  listUsers(tenantId: string): Promise<ConsoleUser[]>;
  /** Gives the user another role; it applies to their live sessions at once. Undefined when no such user. */
  setRole(userId: string, role: ConsoleRole): Promise<ConsoleUser | undefined>;
  /** Disables the user and ends every session of theirs in one transaction; undefined when no such user. */
  disableUser(userId: string): Promise<{ user: ConsoleUser; sessionsEnded: number } | undefined>;
  /** The user whose unexpired invitation this is (enabled users only). */
  findInvitation(digest: Buffer): Promise<ConsoleUser | undefined>;
  /** Sets the password and consumes the invitation, atomically; undefined when it was used or expired. */
  acceptInvitation(digest: Buffer, passwordHash: string): Promise<ConsoleViewer | undefined>;

  startSession(userId: string, idDigest: Buffer): Promise<void>;
  /**
   * The session behind a cookie, when it is live (not ended, not idle longer than `idleMs`, not
   * older than `absoluteMs`, its user enabled); marks it seen now. A session found dead is ended.
   */
  touchSession(idDigest: Buffer, limits: { idleMs: number; absoluteMs: number }): Promise<LiveSession | undefined>;
  endSession(idDigest: Buffer, reason: SessionEnd): Promise<void>;
  setFlash(idDigest: Buffer, flash: Flash): Promise<void>;
  /** The session's flash message, cleared as it is read. */
  takeFlash(idDigest: Buffer): Promise<Flash | undefined>;

  /**
   * Counts one sign-in attempt against each key (fixed windows of `windowMs`) and answers every
   * key's count, this attempt included. Counting before the password is checked means parallel
   * guesses cannot slip past the limit.
   */
  countAttempt(keys: string[], windowMs: number): Promise<ThrottleCount[]>;
  /** After a good password: the account's count is cleared and the address's attempt given back. */
  forgiveAttempt(accountKey: string, addressKey: string): Promise<void>;

  insertLink(
    trx: Knex,
    link: { id: string; digest: Buffer; userId: string; redirectPath: string; apiKeyId: string; ttlMs: number },
  ): Promise<Date>;
  /** Marks the link used (once) and answers its user, or why it cannot be used. */
  consumeLink(digest: Buffer): Promise<LinkConsumption>;
  /** When a link (minted before, by id) expires; undefined when unknown. */
  linkExpiry(linkId: string): Promise<Date | undefined>;
  /**
   * Deletes what can no longer be used, kept `keepMs` for the record: sessions ended (or past the
   * absolute limit), links expired, throttle windows over. Answers how many rows went.
   */
  purgeExpired(limits: { absoluteMs: number; windowMs: number; keepMs: number }): Promise<number>;
}

export function createConsoleStore(db: Knex): ConsoleStore {
  const viewerColumns = "u.id as user_id, u.tenant_id, u.email, u.role";
  const toViewer = (row: { user_id: string; tenant_id: string; email: string; role: string }): ConsoleViewer => ({
    userId: row.user_id,
    tenantId: row.tenant_id,
    email: row.email,
    role: row.role as ConsoleRole,
  });
  return {
    async createUser(user) {
      try {
        const [row] = await db("console_users")
          .insert({
            id: newConsoleUserId(),
            tenant_id: user.tenantId,
            email: user.email,
            role: user.role,
            invitation_digest: user.invitationDigest,
            invitation_expires_at: db.raw("now() + ?::interval", [ms(user.invitationTtlMs)]),
          })
          .returning<(UserRow & { invitation_expires_at: Date })[]>([...USER_COLUMNS, "invitation_expires_at"]);
        return { ...toUser(row!), invitationExpiresAt: row!.invitation_expires_at };
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new ConsoleUserExistsError(`tenant ${user.tenantId} already has a console user ${user.email}`, {
            cause: error,
          });
        }
        throw error;
      }
    },
    async reinvite(userId, digest, ttlMs) {
      const [row] = await db("console_users")
        .update({ invitation_digest: digest, invitation_expires_at: db.raw("now() + ?::interval", [ms(ttlMs)]) })
        .where({ id: userId })
        .returning<{ invitation_expires_at: Date }[]>(["invitation_expires_at"]);
      return row?.invitation_expires_at;
    },
    async findUser(userId) {
      const row = await db("console_users").first<UserRow | undefined>(USER_COLUMNS).where({ id: userId });
      return row ? toUser(row) : undefined;
    },
    async findUserByEmail(tenantId, email) {
      const row = await db("console_users")
        .first<UserRow | undefined>(USER_COLUMNS)
        .where({ tenant_id: tenantId, email });
      return row ? toUser(row) : undefined;
    },
    async findCredentials(tenantId, email) {
      const row = await db("console_users")
        .first<UserRow | undefined>(USER_COLUMNS)
        .where({ tenant_id: tenantId, email })
        .whereNull("disabled_at")
        .whereNotNull("password_hash");
      return row ? { viewer: toUser(row), passwordHash: row.password_hash! } : undefined;
    },
    async listUsers(tenantId) {
      const rows = await db("console_users")
        .select<UserRow[]>(USER_COLUMNS)
        .where({ tenant_id: tenantId })
        .orderBy("email");
      return rows.map(toUser);
    },
    async setRole(userId, role) {
      const [row] = await db("console_users").update({ role }).where({ id: userId }).returning<UserRow[]>(USER_COLUMNS);
      return row ? toUser(row) : undefined;
    },
    async disableUser(userId) {
      return db.transaction(async (trx) => {
        const [row] = await trx("console_users")
          .update({ disabled_at: trx.raw("coalesce(disabled_at, now())"), invitation_digest: null })
          .where({ id: userId })
          .returning<UserRow[]>(USER_COLUMNS);
        if (!row) return undefined;
        const sessionsEnded = await trx("console_sessions")
          .update({ ended_at: trx.fn.now(), ended_reason: "disabled" })
          .where({ user_id: userId })
          .whereNull("ended_at");
        return { user: toUser(row), sessionsEnded };
      });
    },
    async findInvitation(digest) {
      const row = await db("console_users")
        .first<UserRow | undefined>(USER_COLUMNS)
        .where({ invitation_digest: digest })
        .andWhere("invitation_expires_at", ">", db.fn.now())
        .whereNull("disabled_at");
      return row ? toUser(row) : undefined;
    },
    async acceptInvitation(digest, passwordHash) {
      const [row] = await db("console_users")
        .update({ password_hash: passwordHash, invitation_digest: null, invitation_expires_at: null })
        .where({ invitation_digest: digest })
        .andWhere("invitation_expires_at", ">", db.fn.now())
        .whereNull("disabled_at")
        .returning<UserRow[]>(USER_COLUMNS);
      return row ? toUser(row) : undefined;
    },

    async startSession(userId, idDigest) {
      await db("console_sessions").insert({ id_digest: idDigest, user_id: userId });
    },
    async touchSession(idDigest, limits) {
      const { rows } = await db.raw<{
        rows: { user_id: string; tenant_id: string; email: string; role: string; created_at: Date }[];
      }>(
        `update console_sessions s set last_seen_at = now()
           from console_users u
          where s.id_digest = ? and s.ended_at is null and u.id = s.user_id and u.disabled_at is null
            and s.last_seen_at > now() - ?::interval and s.created_at > now() - ?::interval
         returning ${viewerColumns}, s.created_at`,
        [idDigest, ms(limits.idleMs), ms(limits.absoluteMs)],
      );
      const row = rows[0];
      if (row) return { viewer: toViewer(row), createdAt: row.created_at };
      // Not live: end it for good (with why), so it cannot come back if the limits are raised.
      await db.raw(
        `update console_sessions s
            set ended_at = now(),
                ended_reason = case
                  when u.disabled_at is not null then 'disabled'
                  when s.created_at <= now() - ?::interval then 'absolute'
                  else 'idle' end
           from console_users u
          where s.id_digest = ? and s.ended_at is null and u.id = s.user_id`,
        [ms(limits.absoluteMs), idDigest],
      );
      return undefined;
    },
    async endSession(idDigest, reason) {
      await db("console_sessions")
        .update({ ended_at: db.fn.now(), ended_reason: reason })
        .where({ id_digest: idDigest })
        .whereNull("ended_at");
    },
    async setFlash(idDigest, flash) {
      await db("console_sessions")
        .update({ flash: JSON.stringify(flash) })
        .where({ id_digest: idDigest });
    },
    async takeFlash(idDigest) {
      const { rows } = await db.raw<{ rows: { flash: Flash | null }[] }>(
        `update console_sessions s set flash = null
           from (select id_digest, flash from console_sessions where id_digest = ? and flash is not null for update) old
          where s.id_digest = old.id_digest
         returning old.flash`,
        [idDigest],
      );
      return rows[0]?.flash ?? undefined;
    },

    async countAttempt(keys, windowMs) {
      // What is left of the window is read off the clock when the row is written, not off now()
      // (this statement's start): a call that waited for another's lock on the key may find a
      // window that other call started after this one began, and would answer more than the window.
      const { rows } = await db.raw<{ rows: { key: string; attempts: number; window_left_ms: string }[] }>(
        `insert into console_login_throttle as t (key, attempts, window_started_at)
         select key, 1, now() from (values ${keys.map(() => "(?::text)").join(", ")}) as k (key)
         on conflict (key) do update set
           attempts = case when t.window_started_at > now() - ?::interval then t.attempts + 1 else 1 end,
           window_started_at = case when t.window_started_at > now() - ?::interval then t.window_started_at else now() end
         returning key, attempts,
           ceil(extract(epoch from (window_started_at + ?::interval - clock_timestamp())) * 1000) as window_left_ms`,
        [...keys, ms(windowMs), ms(windowMs), ms(windowMs)],
      );
      return rows.map((row) => ({ key: row.key, attempts: row.attempts, windowLeftMs: Number(row.window_left_ms) }));
    },
    async forgiveAttempt(accountKey, addressKey) {
      await db("console_login_throttle").delete().where({ key: accountKey });
      await db("console_login_throttle")
        .update({ attempts: db.raw("greatest(attempts - 1, 0)") })
        .where({ key: addressKey });
    },

    async insertLink(trx, link) {
      const [row] = await trx("console_links")
        .insert({
          id: link.id,
          digest: link.digest,
          user_id: link.userId,
          redirect_path: link.redirectPath,
          api_key_id: link.apiKeyId,
          expires_at: trx.raw("now() + ?::interval", [ms(link.ttlMs)]),
        })
        .returning<{ expires_at: Date }[]>(["expires_at"]);
      return row!.expires_at;
    },
    async consumeLink(digest) {
      const { rows } = await db.raw<{
        rows: { user_id: string; tenant_id: string; email: string; role: string; redirect_path: string }[];
      }>(
        `update console_links l set used_at = now()
           from console_users u
          where l.digest = ? and l.used_at is null and l.expires_at > now()
            and u.id = l.user_id and u.disabled_at is null
         returning ${viewerColumns}, l.redirect_path`,
        [digest],
      );
      const row = rows[0];
      if (row) return { outcome: "consumed", viewer: toViewer(row), redirectPath: row.redirect_path };
      const found = await db("console_links as l")
        .join("console_users as u", "u.id", "l.user_id")
        .first<{ used: boolean; expired: boolean; disabled: boolean } | undefined>(
          db.raw("l.used_at is not null as used"),
          db.raw("l.expires_at <= now() as expired"),
          db.raw("u.disabled_at is not null as disabled"),
        )
        .where("l.digest", digest);
      if (!found) return { outcome: "unknown" };
      return { outcome: found.used ? "used" : found.expired ? "expired" : "disabled" };
    },
    async purgeExpired({ absoluteMs, windowMs, keepMs }) {
      const sessions = await db("console_sessions")
        .delete()
        .where("ended_at", "<", db.raw("now() - ?::interval", [ms(keepMs)]))
        .orWhere("created_at", "<", db.raw("now() - ?::interval", [ms(absoluteMs + keepMs)]));
      const links = await db("console_links")
        .delete()
        .where("expires_at", "<", db.raw("now() - ?::interval", [ms(keepMs)]));
      const windows = await db("console_login_throttle")
        .delete()
        .where("window_started_at", "<", db.raw("now() - ?::interval", [ms(windowMs)]));
      return sessions + links + windows;
    },
    async linkExpiry(linkId) {
      const row = await db("console_links").first<{ expires_at: Date } | undefined>("expires_at").where({ id: linkId });
      return row?.expires_at;
    },
  };
}

/**
 * Creates a console user with a one-time invitation (the CLI's `user create` and the console's
 * users page): answers the user and the invitation token, which only its holder ever sees (the
 * store keeps its digest).
 */
export async function inviteConsoleUser(
  store: Pick<ConsoleStore, "createUser">,
  user: { tenantId: string; email: string; role: ConsoleRole; invitationTtlMs: number },
): Promise<{ user: ConsoleUser & { invitationExpiresAt: Date }; token: string }> {
  const token = issueConsoleToken();
  const created = await store.createUser({ ...user, invitationDigest: digestConsoleToken(token) });
  return { user: created, token };
}
