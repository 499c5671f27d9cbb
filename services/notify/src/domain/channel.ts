/**
 * A tenant's own WhatsApp channel (issue 32): what connecting one takes, what a check of the
 * number says about readiness, and which inbound words are consent commands. Plain functions:
 * the repository stores, the gRPC service and the callbacks apply.
 */
import { createHash } from "node:crypto";
import { DomainError, InvalidArgumentError } from "@platform/service-kit/errors";
import { notificationTypes, type NotificationType } from "./notification.js";

export interface ChannelTemplate {
  name: string;
  /** A WhatsApp language code such as en_US. */
  language: string;
}

/** What PUT .../channel (and admin `tenant channel connect`) connects. */
export interface ChannelConnection {
  wabaId: string;
  phoneNumberId: string;
  /** The access token in the clear: sealed before it is stored, never logged, never answered. */
  accessToken: string;
  /** Per notification type, the approved template (types not named use the configured defaults). */
  templates: Partial<Record<NotificationType, ChannelTemplate>>;
  messagesPerSecond: number;
  stopKeywords: string[];
  startKeywords: string[];
  /** The tenant record's version the caller read; undefined: no check. */
  expectedVersion: number | undefined;
}

export const DEFAULT_MESSAGES_PER_SECOND = 80;
export const DEFAULT_STOP_KEYWORDS = ["STOP", "UNSUBSCRIBE"] as const;
export const DEFAULT_START_KEYWORDS = ["START"] as const;

export class InvalidChannelError extends InvalidArgumentError {
  override name = "InvalidChannelError";
  constructor(problems: readonly string[]) {
    super("channel.invalid", problems.join("; "));
  }
}

export class ChannelNotConnectedError extends DomainError {
  override name = "ChannelNotConnectedError";
  constructor() {
    super("not_found", "channel.not_connected", "the tenant has not connected a WhatsApp number");
  }
}

const GRAPH_ID = /^[0-9]{1,32}$/;
const TEMPLATE_NAME = /^[a-z0-9_]{1,512}$/;
const LANGUAGE = /^[A-Za-z_]{2,10}$/;
/** A token is opaque printable ASCII without spaces (Meta's are base64-like, ~200-400 characters). */
const TOKEN = /^[\x21-\x7e]{16,4096}$/;
const KEYWORD = /^[\p{L}\p{N}_-]{1,32}$/u;

/** A keyword as it is compared: trimmed, upper case. */
export const normalizeKeyword = (word: string) => word.trim().toUpperCase();

function keywordsOf(
  list: readonly string[] | undefined,
  fallback: readonly string[],
  name: string,
  problems: string[],
) {
  if (list === undefined || list.length === 0) return [...fallback];
  const words = [...new Set(list.map(normalizeKeyword))];
  if (words.length > 20) problems.push(`${name} takes at most 20 keywords`);
  for (const word of words) {
    if (!KEYWORD.test(word)) problems.push(`${name}: each keyword is 1-32 letters, digits, _ or -`);
  }
  return words;
}

/** Checks a connection; names every problem (never the token) in one message. */
export function validateChannelConnection(input: {
  wabaId: string;
  phoneNumberId: string;
  accessToken: string;
  templates: { type: string; name: string; language: string }[];
  messagesPerSecond: number | undefined;
  stopKeywords: string[] | undefined;
  startKeywords: string[] | undefined;
  expectedVersion: number | undefined;
}): ChannelConnection {
  const problems: string[] = [];
  if (!GRAPH_ID.test(input.wabaId)) problems.push("wabaId must be the WhatsApp Business Account id (1-32 digits)");
  if (!GRAPH_ID.test(input.phoneNumberId)) problems.push("phoneNumberId must be the phone number id (1-32 digits)");
  if (!TOKEN.test(input.accessToken)) {
    problems.push("accessToken must be 16-4096 printable characters without spaces");
  }
  const templates: Partial<Record<NotificationType, ChannelTemplate>> = {};
  for (const template of input.templates) {
    if (!(notificationTypes as readonly string[]).includes(template.type)) {
      problems.push(`templates: ${JSON.stringify(template.type.slice(0, 40))} is not a notification type`);
      continue;
    }
    if (templates[template.type as NotificationType]) problems.push(`templates: ${template.type} is given twice`);
    if (!TEMPLATE_NAME.test(template.name)) problems.push(`templates.${template.type}.name must be a-z 0-9 _`);
    if (!LANGUAGE.test(template.language)) problems.push(`templates.${template.type}.language must be like en_US`);
    templates[template.type as NotificationType] = { name: template.name, language: template.language };
  }
  const messagesPerSecond = input.messagesPerSecond ?? DEFAULT_MESSAGES_PER_SECOND;
  if (!Number.isInteger(messagesPerSecond) || messagesPerSecond < 1 || messagesPerSecond > 1000) {
    problems.push("messagesPerSecond must be a whole number from 1 to 1000");
  }
  const stopKeywords = keywordsOf(input.stopKeywords, DEFAULT_STOP_KEYWORDS, "stopKeywords", problems);
  const startKeywords = keywordsOf(input.startKeywords, DEFAULT_START_KEYWORDS, "startKeywords", problems);
  if (stopKeywords.some((word) => startKeywords.includes(word))) {
    problems.push("a keyword cannot be both a stop and a start keyword");
  }
  const { expectedVersion } = input;
  if (expectedVersion !== undefined && (!Number.isSafeInteger(expectedVersion) || expectedVersion < 1)) {
    problems.push("expectedVersion must be a whole number from 1");
  }
  if (problems.length > 0) throw new InvalidChannelError([...new Set(problems)]);
  return {
    wabaId: input.wabaId,
    phoneNumberId: input.phoneNumberId,
    accessToken: input.accessToken,
    templates,
    messagesPerSecond,
    stopKeywords,
    startKeywords,
    expectedVersion,
  };
}

/** What a customer's inbound text asks, given the tenant's keywords: opt out, opt in, or nothing. */
export function consentCommandOf(
  text: string,
  keywords: { stopKeywords: readonly string[]; startKeywords: readonly string[] },
): "opt_out" | "opt_in" | undefined {
  const word = normalizeKeyword(text);
  if (keywords.stopKeywords.includes(word)) return "opt_out";
  if (keywords.startKeywords.includes(word)) return "opt_in";
  return undefined;
}

/**
 * A stable, opaque reference to a recipient of a tenant (events and the activity feed carry it,
 * never the phone number).
 */
export function recipientReference(tenantId: string, recipient: string): string {
  return `rcp_${createHash("sha256").update(`${tenantId}|${recipient}`).digest("hex").slice(0, 24)}`;
}

/** The reason codes a check of the number may fail with (code catalogue, capability area). */
export const channelReasonCodes = {
  credentialsRevoked: "capability.credentials_revoked",
  permissionMissing: "capability.permission_missing",
  qualityLow: "capability.channel_quality_low",
  disconnected: "capability.channel_disconnected",
  restricted: "capability.channel_restricted",
  checkFailed: "capability.check_failed",
} as const;

/** What the Cloud API's phone-number resource says of a number (the fields we read). */
export interface NumberReading {
  displayPhoneNumber: string | null;
  verifiedName: string | null;
  qualityRating: string | null;
  status: string | null;
}

/**
 * What reading the number gave: its fields; an error object of the Cloud API (a refusal: HTTP
 * status and code); or nothing usable (network error, timeout, 5xx without an error object).
 */
export type NumberCheck =
  | { kind: "read"; reading: NumberReading }
  | { kind: "refused"; httpStatus: number; providerCode: number }
  | { kind: "unreachable"; reason: string };

/** The check's verdict: a capability report (pass, or fail with its reason) or none. */
export type ChannelVerdict = { passed: true; reasonCode: null } | { passed: false; reasonCode: string } | undefined;

const restrictedStatuses = new Set(["BANNED", "RESTRICTED", "RATE_LIMITED"]);

/**
 * The readiness rule (docs/notifications.md, "Readiness of a number"):
 *   - a 401 or error code 190 (the token is invalid, expired or revoked): fail, credentials_revoked;
 *   - error codes 10 and 200 (a permission missing): fail, permission_missing;
 *   - status FLAGGED or quality rating RED: fail, channel_quality_low;
 *   - status BANNED, RESTRICTED or RATE_LIMITED: fail, channel_restricted;
 *   - any other status than CONNECTED (DISCONNECTED, PENDING, DELETED, MIGRATED, ...): fail,
 *     channel_disconnected;
 *   - CONNECTED with a quality rating other than RED (GREEN, YELLOW, UNKNOWN): pass;
 *   - another refusal of the Cloud API: fail, check_failed;
 *   - unreachable (network error, timeout, an answer we cannot read): no verdict. A check that
 *     could not ask never flips readiness on its own: the last verdict stands until a check that
 *     got an answer (or a callback) says otherwise.
 */
export function verdictOf(check: NumberCheck): ChannelVerdict {
  if (check.kind === "unreachable") return undefined;
  if (check.kind === "refused") {
    if (check.httpStatus === 401 || check.providerCode === 190) {
      return { passed: false, reasonCode: channelReasonCodes.credentialsRevoked };
    }
    if (check.providerCode === 10 || check.providerCode === 200) {
      return { passed: false, reasonCode: channelReasonCodes.permissionMissing };
    }
    return { passed: false, reasonCode: channelReasonCodes.checkFailed };
  }
  const status = (check.reading.status ?? "").toUpperCase();
  const quality = (check.reading.qualityRating ?? "").toUpperCase();
  if (status === "FLAGGED" || quality === "RED") return { passed: false, reasonCode: channelReasonCodes.qualityLow };
  if (restrictedStatuses.has(status)) return { passed: false, reasonCode: channelReasonCodes.restricted };
  if (status !== "CONNECTED") return { passed: false, reasonCode: channelReasonCodes.disconnected };
  return { passed: true, reasonCode: null };
}

/** The fields of a number-level callback (`phone_number_quality_update`, `account_update`) we read. */
export interface NumberUpdate {
  field: "phone_number_quality_update" | "account_update";
  value: unknown;
}

/**
 * What a number-level callback says of readiness, given the reason the channel is failing with
 * now (null when it passes):
 *   phone_number_quality_update: event FLAGGED: fail channel_quality_low; UNFLAGGED: pass, but only
 *     when the failure now is channel_quality_low (a flag lifted does not overrule a revoked token);
 *     other events (limit tier UPGRADE/DOWNGRADE...): no verdict.
 *   account_update: a ban (ban_info.waba_ban_state DISABLE or SCHEDULE_FOR_DISABLE with event
 *     DISABLED_UPDATE, or event BANNED / ACCOUNT_VIOLATION) or a restriction (event
 *     ACCOUNT_RESTRICTION with restriction_info entries): fail channel_restricted; PARTNER_REMOVED or
 *     ACCOUNT_DELETED: fail channel_disconnected; a reinstatement (waba_ban_state REINSTATE, or an
 *     ACCOUNT_RESTRICTION with no restriction left): pass, only when the failure now is
 *     channel_restricted; other events: no verdict.
 */
export function verdictOfUpdate(update: NumberUpdate, failingWith: string | null): ChannelVerdict {
  const value = (update.value ?? {}) as Record<string, unknown>;
  const event = typeof value.event === "string" ? value.event.toUpperCase() : "";
  const recover = (reason: string): ChannelVerdict =>
    failingWith === reason ? { passed: true, reasonCode: null } : undefined;
  if (update.field === "phone_number_quality_update") {
    if (event === "FLAGGED") return { passed: false, reasonCode: channelReasonCodes.qualityLow };
    if (event === "UNFLAGGED") return recover(channelReasonCodes.qualityLow);
    return undefined;
  }
  const banInfo = (value.ban_info ?? {}) as Record<string, unknown>;
  const banState = typeof banInfo.waba_ban_state === "string" ? banInfo.waba_ban_state.toUpperCase() : "";
  const restrictions = Array.isArray(value.restriction_info) ? value.restriction_info : undefined;
  if (banState === "REINSTATE") return recover(channelReasonCodes.restricted);
  if (banState === "DISABLE" || banState === "SCHEDULE_FOR_DISABLE" || event === "BANNED") {
    return { passed: false, reasonCode: channelReasonCodes.restricted };
  }
  if (event === "ACCOUNT_VIOLATION") return { passed: false, reasonCode: channelReasonCodes.restricted };
  if (event === "ACCOUNT_RESTRICTION") {
    return restrictions && restrictions.length > 0
      ? { passed: false, reasonCode: channelReasonCodes.restricted }
      : recover(channelReasonCodes.restricted);
  }
  if (event === "PARTNER_REMOVED" || event === "ACCOUNT_DELETED") {
    return { passed: false, reasonCode: channelReasonCodes.disconnected };
  }
  return undefined;
}
