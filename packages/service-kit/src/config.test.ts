import { z } from "zod";
import { describe, expect, it } from "vitest";
import { ConfigError, databaseSettings, eventBusSettings, loadConfig } from "./config.js";

const schema = z.object({ ...databaseSettings, ...eventBusSettings, SECRETS_KEY: z.string().min(1) });

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(schema, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe("loadConfig", () => {
  it("falls back to this machine's Postgres and NATS outside production", () => {
    const config = loadConfig(schema, { SECRETS_KEY: "k" });
    expect(config.DATABASE_URL).toBe("postgres://postgres@127.0.0.1:5432/platform");
    expect(config.NATS_URL).toBe("nats://127.0.0.1:4222");
  });

  it("requires DATABASE_URL and NATS_URL when NODE_ENV=production, after the schema's own problems", () => {
    expect(problemsOf({ NODE_ENV: "production" })).toEqual([
      "SECRETS_KEY: Invalid input: expected string, received undefined",
      "DATABASE_URL: required when NODE_ENV=production (its default is this machine's 127.0.0.1)",
      "NATS_URL: required when NODE_ENV=production (its default is this machine's 127.0.0.1)",
    ]);
    expect(problemsOf({ NODE_ENV: "production", SECRETS_KEY: "k", NATS_URL: "nats://n:4222" })).toEqual([
      "DATABASE_URL: required when NODE_ENV=production (its default is this machine's 127.0.0.1)",
    ]);
  });

  it("reads NATS_STREAM_REPLICAS as 1, 3 or 5, 1 when unset", () => {
    expect(loadConfig(schema, { SECRETS_KEY: "k" }).NATS_STREAM_REPLICAS).toBe(1);
    expect(loadConfig(schema, { SECRETS_KEY: "k", NATS_STREAM_REPLICAS: "3" }).NATS_STREAM_REPLICAS).toBe(3);
    expect(loadConfig(schema, { SECRETS_KEY: "k", NATS_STREAM_REPLICAS: "5" }).NATS_STREAM_REPLICAS).toBe(5);
    for (const bad of ["2", "0", "7", "three"]) {
      expect(problemsOf({ SECRETS_KEY: "k", NATS_STREAM_REPLICAS: bad })).toEqual([
        `NATS_STREAM_REPLICAS: must be 1, 3 or 5 (an even count survives no more lost servers than the odd one below it) (got "${bad}")`,
      ]);
    }
  });

  it("asks in production only for the machine defaults a service reads", () => {
    const withoutNats = z.object({ ...databaseSettings });
    expect(() => loadConfig(withoutNats, { NODE_ENV: "production" })).toThrow(
      "invalid configuration: DATABASE_URL: required when NODE_ENV=production (its default is this machine's 127.0.0.1)",
    );
    const given = loadConfig(withoutNats, { NODE_ENV: "production", DATABASE_URL: "postgres://db/platform" });
    expect(given.DATABASE_URL).toBe("postgres://db/platform");
  });
});
