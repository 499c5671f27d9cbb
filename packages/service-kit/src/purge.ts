import type { Logger } from "pino";

/**
 * Runs `purge` every `intervalMs` in the background: logs what it removed (`<what> purged`, only
 * when something was), logs a failure and tries again at the next tick; `stop()` ends it at
 * shutdown. The timer never keeps the process alive.
 */
export function purgeEvery(
  intervalMs: number,
  logger: Pick<Logger, "info" | "warn">,
  what: string,
  purge: () => Promise<number>,
): { stop(): void } {
  const timer = setInterval(() => {
    purge().then(
      (purged) => purged > 0 && logger.info({ purged }, `${what} purged`),
      (error: unknown) => logger.warn({ err: error }, `${what}: purge failed; will retry`),
    );
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
