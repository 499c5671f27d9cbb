import { setTimeout as sleep } from "node:timers/promises";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { loadGatewayConfig } from "../config.js";
import { FleetHeartbeat, type FleetStore } from "./fleet-store.js";

/** A store answering from a script: a number is a live count, an Error a failed round trip. */
function scriptedStore(script: (number | Error)[]) {
  const calls: string[] = [];
  const store: FleetStore = {
    beat(id) {
      calls.push(`beat ${id}`);
      const next = script.length > 1 ? script.shift()! : script[0]!;
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
    },
    leave(id) {
      calls.push(`leave ${id}`);
      return Promise.resolve();
    },
  };
  return { store, calls };
}

const until = async (condition: () => boolean, deadlineMs = 2_000) => {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > deadlineMs) throw new Error("condition not met in time");
    await sleep(5);
  }
};

describe("FleetHeartbeat", () => {
  const logger = pino({ level: "silent" });

  it("reports the first count at start, then each change, and keeps the last count while the database fails", async () => {
    const down = new Error("connection refused");
    const { store, calls } = scriptedStore([3, 3, down, down, 2]);
    const sizes: number[] = [];
    const heartbeat = new FleetHeartbeat(store, {
      id: "g1",
      intervalMs: 10,
      windowMs: 30,
      logger,
      onSize: (n) => sizes.push(n),
    });
    expect(await heartbeat.start()).toBe(3);
    expect(sizes).toEqual([3]);
    await until(() => calls.length >= 4);
    expect(sizes).toEqual([3]); // failures change nothing
    await until(() => sizes.length === 2);
    expect(sizes).toEqual([3, 2]);
    await heartbeat.stop();
    expect(calls.at(-1)).toBe("leave g1");
  });

  it("fails start-up when the first beat fails, so a gateway never serves with a count that leaves it out", async () => {
    const { store } = scriptedStore([new Error("no database")]);
    const heartbeat = new FleetHeartbeat(store, {
      id: "g1",
      intervalMs: 10,
      windowMs: 30,
      logger,
      onSize: () => undefined,
    });
    await expect(heartbeat.start()).rejects.toThrow("no database");
  });

  it("stops beating when it leaves", async () => {
    const { store, calls } = scriptedStore([1]);
    const heartbeat = new FleetHeartbeat(store, {
      id: "g1",
      intervalMs: 5,
      windowMs: 15,
      logger,
      onSize: () => undefined,
    });
    await heartbeat.start();
    await heartbeat.stop();
    const count = calls.length;
    await sleep(30);
    expect(calls).toHaveLength(count);
  });
});

describe("the fleet heartbeat settings", () => {
  const base = { DATABASE_URL: "postgres://127.0.0.1/unused" };

  it("default to a beat every 2 s and a window of 6 s", () => {
    const config = loadGatewayConfig(base);
    expect([config.FLEET_HEARTBEAT_INTERVAL, config.FLEET_HEARTBEAT_WINDOW]).toEqual([2_000, 6_000]);
  });

  it("refuse a window shorter than two intervals", () => {
    expect(() => loadGatewayConfig({ ...base, FLEET_HEARTBEAT_INTERVAL: "2s", FLEET_HEARTBEAT_WINDOW: "3s" })).toThrow(
      /FLEET_HEARTBEAT_WINDOW: must be at least twice FLEET_HEARTBEAT_INTERVAL/,
    );
  });
});
