/** notify's poll projections, rebuilt from the EVENTS stream. */
import { reachNotify } from "../reach-service.js";
import { adminCommand } from "../resources.js";

/** A rebuild replays the whole stream (30 days): far longer than an ordinary call may take. */
const REBUILD_TIMEOUT_MS = 30 * 60_000;

export const projectionCommands = [
  adminCommand({
    name: "projection rebuild",
    options: {},
    does:
      "empties notify's poll projections (work, attention, activity) and replays the EVENTS stream into them, " +
      "under a lock the live projector waits on; prints the events applied and the stream sequence read up to",
    async run(_options, resources) {
      const result = await reachNotify(resources, "", () =>
        resources.projections().rebuildProjections({}, { ...resources.call(), timeoutMs: REBUILD_TIMEOUT_MS }),
      );
      return { eventsApplied: Number(result.eventsApplied), lastSequence: Number(result.lastSequence) };
    },
  }),
];
