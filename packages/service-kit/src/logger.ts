import { pino, type Logger, type DestinationStream } from "pino";
import { isSecretVariable } from "./config.js";
import type { BuildInfo } from "./metrics.js";

export type { Logger } from "pino";

/**
 * Structured JSON logs on stdout: one object per line with `level`, `time` (ISO 8601),
 * `service` and `msg`. Request-scoped lines carry `requestId` (see child loggers).
 * Secrets never reach a log line: the paths below are redacted wherever they appear.
 *
 * Written synchronously: a line logged just before process.exit is not lost, and when stdout's
 * reader is gone (npm start's supervisor killed) logging stops at the first EPIPE. Buffered
 * (async) output would instead be flushed at exit by a loop that retries EPIPE forever.
 */
export function createLogger(service: string, level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service },
      messageKey: "msg",
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: {
        paths: [
          "authorization",
          "headers.authorization",
          "req.headers.authorization",
          "key",
          "secret",
          "*.secret",
          "*.key",
        ],
        censor: "[redacted]",
      },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

/**
 * The one line every process prints once it is bound, with its pid, the ports it got and its
 * build (version and revision), whatever LOG_LEVEL says: orchestration (npm start, the tests, the
 * benchmarks) waits for it, and an operator reads from it which release started.
 */
export function announceListening(logger: Logger, ports: Record<string, number | string>, build: BuildInfo): void {
  logger
    .child({}, { level: "info" })
    .info({ pid: process.pid, version: build.version, revision: build.revision, ...ports }, "listening");
}

/**
 * The configuration as it may be logged: values of secret-named variables (`SECRETS_KEY`,
 * `*_TOKEN`, `*_SECRET`, ...) replaced, and the password of any URL (`postgres://u:p@h/db`) hidden.
 */
export function redactConfiguration(config: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(config).map(([name, value]) => {
      if (value === undefined || value === "") return [name, value];
      if (isSecretVariable(name)) return [name, "[redacted]"];
      if (typeof value === "string")
        return [name, value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/i, "$1:[redacted]@")];
      return [name, value];
    }),
  );
}

/**
 * One line at start-up with the effective configuration (defaults applied, secrets redacted),
 * whatever LOG_LEVEL says, so an operator can see which settings reached the process.
 */
export function announceConfiguration(logger: Logger, config: Record<string, unknown>, build?: BuildInfo): void {
  logger
    .child({}, { level: "info" })
    .info(
      { ...(build ? { version: build.version, revision: build.revision } : {}), config: redactConfiguration(config) },
      "configuration",
    );
}
