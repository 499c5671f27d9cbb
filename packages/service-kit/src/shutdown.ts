import type { Logger } from "pino";

/** The shutdown settings every process reads (config.ts processSettings), in milliseconds. */
export interface ShutdownSettings {
  /** Not ready but still serving, so endpoints and load balancers stop sending. */
  SHUTDOWN_DRAIN_DELAY: number;
  /** After the drain, how long in-flight work may take to finish. */
  SHUTDOWN_GRACE: number;
}

/**
 * Once in-flight work is done (or its grace is over), closing pools, connections and listeners may
 * take this much longer before the process gives up and exits 1. The chart's
 * terminationGracePeriodSeconds leaves more than this beyond drain + grace (shutdown.marginSeconds).
 */
export const SHUTDOWN_CLOSE_MS = 2_000;

/** The two steps every service gives; the order and the timings are this module's. */
export interface ShutdownSteps {
  /** Report not ready (gRPC health NOT_SERVING, the gateway's /readyz 503) and go on serving. */
  notReady(): void;
  /**
   * After the drain delay: stop taking new work, let what is in flight finish within `graceMs`,
   * give unfinished JetStream messages back (nak), then close everything.
   */
  stop(graceMs: number): Promise<void>;
}

/**
 * The shutdown sequence of every service, run once on the first SIGTERM or SIGINT:
 *
 * 1. `notReady()` at once: probes fail, endpoints and the gateways' balancers stop picking it;
 * 2. wait `drainDelayMs`, still serving whatever arrives meanwhile;
 * 3. `stop(graceMs)`: no new work, in-flight work finishes (or is given back), then everything closes;
 * 4. exit 0, or 1 when stop threw or the whole did not end within drain + grace + SHUTDOWN_CLOSE_MS.
 *
 * A process started with an IPC channel (by `npm start`'s supervisor) does the same when that
 * channel closes: its supervisor is gone, even if it was SIGKILLed, and the process must not live
 * on as an orphan holding its ports.
 */
export function exitGracefullyOnSignal(logger: Logger, settings: ShutdownSettings, steps: ShutdownSteps): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals | "supervisor gone") => {
    if (stopping) return;
    stopping = true;
    const { SHUTDOWN_DRAIN_DELAY: drainDelayMs, SHUTDOWN_GRACE: graceMs } = settings;
    const limitMs = drainDelayMs + graceMs + SHUTDOWN_CLOSE_MS;
    logger.info({ signal, drainDelayMs, graceMs }, "shutting down");
    const timer = setTimeout(() => {
      logger.error({ limitMs }, "shutdown grace period exceeded; exiting");
      process.exit(1);
    }, limitMs);
    timer.unref();
    const run = async () => {
      steps.notReady();
      if (drainDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, drainDelayMs));
      logger.info({ graceMs }, "draining: no new work, finishing what is in flight");
      await steps.stop(graceMs);
    };
    run().then(
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
