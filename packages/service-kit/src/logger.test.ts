import { describe, expect, it } from "vitest";
import { announceConfiguration, announceListening, createLogger, redactConfiguration } from "./logger.js";

describe("the configuration line", () => {
  it("hides secrets by name and URL passwords, and keeps everything else", () => {
    expect(
      redactConfiguration({
        SECRETS_KEY: "c2VjcmV0",
        WHATSAPP_ACCESS_TOKEN: "EAAG...",
        WHATSAPP_APP_SECRET: "abc",
        DATABASE_URL: "postgres://app:hunter2@db:5432/platform",
        NATS_URL: "nats://127.0.0.1:4222",
        API_KEY_CACHE_TTL: 30_000,
        PROBLEM_BASE_URI: undefined,
        MIGRATE_ON_START: true,
        WEBHOOKS_ALLOW_PRIVATE_TARGETS: true,
        TLS_PRIVATE_KEY: "-----BEGIN",
        DB_PASSWORD: "hunter2",
      }),
    ).toEqual({
      SECRETS_KEY: "[redacted]",
      WHATSAPP_ACCESS_TOKEN: "[redacted]",
      WHATSAPP_APP_SECRET: "[redacted]",
      DATABASE_URL: "postgres://app:[redacted]@db:5432/platform",
      NATS_URL: "nats://127.0.0.1:4222",
      API_KEY_CACHE_TTL: 30_000,
      PROBLEM_BASE_URI: undefined,
      MIGRATE_ON_START: true,
      // A setting that mentions PRIVATE is no secret: the operator must see that it took effect.
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: true,
      TLS_PRIVATE_KEY: "[redacted]",
      DB_PASSWORD: "[redacted]",
    });
  });
});

describe("the start-up lines", () => {
  const capture = () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger("catalog", "error", {
      write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>),
    });
    return { lines, logger };
  };
  const build = { version: "2.3.4", revision: "abc123" };

  it("carry the build's version and revision, whatever LOG_LEVEL says", () => {
    const { lines, logger } = capture();
    announceConfiguration(logger, { GRPC_PORT: 50051 }, build);
    announceListening(logger, { grpcPort: 50051, metricsPort: 9464 }, build);
    expect(lines).toEqual([
      expect.objectContaining({ msg: "configuration", service: "catalog", ...build, config: { GRPC_PORT: 50051 } }),
      expect.objectContaining({
        msg: "listening",
        service: "catalog",
        ...build,
        pid: process.pid,
        grpcPort: 50051,
        metricsPort: 9464,
      }),
    ]);
  });
});
