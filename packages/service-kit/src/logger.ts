import { pino, type Logger, type DestinationStream } from "pino";

export type { Logger } from "pino";

/**
 * Structured JSON logs on stdout: one object per line with `level`, `time` (ISO 8601),
 * `service` and `msg`. Request-scoped lines carry `requestId` (see child loggers).
 * Secrets never reach a log line: the paths below are redacted wherever they appear.
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
    destination,
  );
}

/**
 * The one line every process prints once it is bound, with the ports it got, whatever LOG_LEVEL
 * says: orchestration (npm start, the tests, the benchmarks) waits for it.
 */
export function announceListening(logger: Logger, ports: Record<string, number | string>): void {
  logger.child({}, { level: "info" }).info(ports, "listening");
}
