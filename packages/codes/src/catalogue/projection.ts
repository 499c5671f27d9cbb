import type { CodeEntries } from "../code-entry.js";

/** The poll reads (work, attention, activity) and their projections. */
export const projectionCodes = {} as const satisfies CodeEntries;
