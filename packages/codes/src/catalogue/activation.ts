import type { CodeEntries } from "../code-entry.js";

/** Activation and capability checks. */
export const activationCodes = {} as const satisfies CodeEntries;
