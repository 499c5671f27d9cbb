import type { CodeEntries } from "../code-entry.js";

/** Events entering through the internal contract (EventService, admin `event emit`). */
export const eventCodes = {} as const satisfies CodeEntries;
