import { describe, expect, it } from "vitest";
import { redactConfiguration } from "./logger.js";

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
    });
  });
});
