/**
 * One entry of the code catalogue. Partners branch on the code; `title` is stable per code;
 * `meaning` and `reaction` are what the OpenAPI document tells them (spec 7.2).
 */
export interface CodeEntry {
  /** The HTTP status when the code is a problem `code`; absent for codes that never are. */
  status?: number;
  /** Stable per code (the problem's `title`). */
  title: string;
  /** What happened. */
  meaning: string;
  /** What the client does about it. */
  reaction: string;
  /**
   * Where the code appears: `problem` (a tenant-interface problem `code`), `lastErrorCode` (on the
   * tenant record), `blockingReason` (activation's `blockingReasons[].code`), `reasonCode` (work,
   * attention and activity items, capability checks, event snapshots) or `internal` (between our
   * services and in the admin CLI only; never sent to a partner).
   */
  usedAs: readonly CodeUse[];
}

export type CodeUse = "problem" | "lastErrorCode" | "blockingReason" | "reasonCode" | "internal";

/** How the per-area files declare their entries; `satisfies` keeps the literal keys. */
export type CodeEntries = Record<string, CodeEntry>;
