import type { Logger } from "pino";

/**
 * Runs `stop` once on the first SIGTERM or SIGINT, then exits: 0 when stop finished,
 * 1 when it threw or did not finish within `graceMs`. A process started with an IPC channel (by
 * `npm start`'s supervisor) does the same when that channel closes: its supervisor is gone, even
 * if it was SIGKILLed, and the process must not live on as an orphan holding its ports.
 */
export function exitGracefullyOnSignal(logger: Logger, graceMs: number, stop: (signal: string) => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals | "supervisor gone") => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    const timer = setTimeout(() => {
      logger.error({ graceMs }, "shutdown grace period exceeded; exiting");
      process.exit(1);
    }, graceMs);
    timer.unref();
    stop(signal).then(
      () => {
        logger.info("stopped");
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  if (process.send !== undefined) {
    process.channel?.unref(); // the channel alone must not keep a stopped process alive
    if (process.connected) process.once("disconnect", () => onSignal("supervisor gone"));
    else onSignal("supervisor gone");
  }
}

/** Logs an error that stops start-up (a bad config, an unreachable database) and exits 1. */
export function failStartup(logger: Logger, error: unknown): never {
  logger.fatal({ err: error }, error instanceof Error ? error.message : "start-up failed");
  process.exit(1);
}
