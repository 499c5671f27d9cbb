import { setTimeout as sleep } from "node:timers/promises";
import type { ServiceProcess } from "@platform/local-stack/service-process";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "./stack.js";

/**
 * The fleet-wide rate limit with several gateway processes on one database, as an autoscaler
 * changes their number: the gateways count themselves (gateway.fleet_members) and each enforces
 * 1/N, so a key's requests spread round robin over the fleet meet the documented burst whatever
 * N is. Bounds asserted are the documented ones (docs/operations.md, "Rate limits under
 * autoscaling"): a gateway that stops cleanly is counted out within one heartbeat interval of its
 * exit, one that is killed within window + interval of its death, and one that joins counts
 * itself before it listens while the others count it within one interval.
 */
describe("rate limiting across a fleet of gateways", () => {
  const INTERVAL = 500;
  const WINDOW = 1_500;
  /** On top of each bound: the beat's own round trip and the event loop's lateness on a busy machine. */
  const SEEN = 250;
  const BURST = 100;
  const fleetEnv = {
    // A slow refill (0.1/s for the fleet: 1 000 s from empty) so no bucket refills by a token
    // during a burst: every count below is exact.
    RATE_LIMIT_PER_SECOND: "0.1",
    RATE_LIMIT_BURST: String(BURST),
    FLEET_HEARTBEAT_INTERVAL: `${INTERVAL}ms`,
    FLEET_HEARTBEAT_WINDOW: `${WINDOW}ms`,
  };
  let stack: TestStack;
  /** Every gateway started, oldest first. */
  const gateways: ServiceProcess[] = [];
  const live = () => gateways.filter((g) => g.child.exitCode === null && g.child.signalCode === null);
  const startGateway = async () => {
    const started = await stack.startGateway(fleetEnv);
    gateways.push(started);
    return started;
  };

  beforeAll(async () => {
    stack = await startTestStack(fleetEnv);
    gateways.push(stack.gateway);
  });
  afterAll(async () => stack?.stop());

  /** The rows of gateway.fleet_members: one per gateway that has not left or aged out. */
  async function memberRows(): Promise<number> {
    const client = new pg.Client({ connectionString: stack.scratch.url });
    await client.connect();
    try {
      return (await client.query<{ n: number }>("select cast(count(*) as int) as n from gateway.fleet_members"))
        .rows[0]!.n;
    } finally {
      await client.end();
    }
  }

  const url = (gateway: ServiceProcess) => `http://127.0.0.1:${gateway.listening.port as number}`;

  async function fleetSizeOf(gateway: ServiceProcess): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${gateway.listening.metricsPort as number}/metrics`)).text();
    const match = /^gateway_fleet_size(?:\{[^}]*\})? (\d+)$/m.exec(text);
    if (!match) throw new Error("no gateway_fleet_size in the metrics");
    return Number(match[1]);
  }

  /** When (epoch ms, from its log line) `gateway` logged `msg` with these fields, at or after `since`. */
  function loggedAt(gateway: ServiceProcess, msg: string, fields: Record<string, unknown>, since: number) {
    const at = gateway.logs
      .filter((line) => line.msg === msg && Object.entries(fields).every(([k, v]) => line[k] === v))
      .map((line) => Date.parse(line.time as string))
      .find((time) => time >= since);
    return at;
  }

  /** Its output may trail its exit by a moment: waits (2 s at most) for the line. */
  async function untilLogged(gateway: ServiceProcess, msg: string) {
    const started = Date.now();
    for (;;) {
      const at = loggedAt(gateway, msg, {}, 0);
      if (at !== undefined) return at;
      if (Date.now() - started > 2_000) throw new Error(`${gateway.name} never logged "${msg}"`);
      await sleep(20);
    }
  }

  /**
   * Waits until every gateway has logged that it counts `size` (it logs each change, with the
   * time it learned it) at or after `from` (epoch ms, taken before the test made the change); says
   * how long after `since` (the change, as its maker logged it) the last of them did: at most 0
   * when they all learned it before that line (a joiner's row is in the table, and counted by the
   * others' beats, a moment before it logs). Fails once `boundMs` + SEEN have passed since `since`
   * without that.
   */
  async function untilCounted(gateways: ServiceProcess[], size: number, since: number, boundMs: number, from = since) {
    for (;;) {
      const times = gateways.map((g) => loggedAt(g, "gateway fleet size", { fleetSize: size }, from));
      if (times.every((t) => t !== undefined)) return Math.max(...times) - since;
      if (Date.now() - since > boundMs + SEEN) {
        const sizes = await Promise.all(gateways.map(fleetSizeOf));
        throw new Error(
          `${Date.now() - since} ms after the change the gateways count ${sizes.join(", ")}, not ${size}`,
        );
      }
      await sleep(20);
    }
  }

  /**
   * A burst for a fresh key, round robin over `gateways` (an ingress spreading the key's requests),
   * `perGateway` requests each; says how many each admitted and what the headers said.
   */
  async function burst(gateways: ServiceProcess[], perGateway: number) {
    const key = (await stack.admin("key", "create")).key as string;
    const admitted = gateways.map(() => 0);
    const policies = new Set<string | null>();
    let firstRateLimit: string | null = null;
    for (let i = 0; i < perGateway * gateways.length; i++) {
      const res = await fetch(`${url(gateways[i % gateways.length]!)}/v1/pets`, {
        headers: { authorization: `Bearer ${key}` },
      });
      await res.arrayBuffer();
      if (res.status === 200) admitted[i % gateways.length]!++;
      else expect(res.status).toBe(429);
      policies.add(res.headers.get("ratelimit-policy"));
      if (i === 0) firstRateLimit = res.headers.get("ratelimit");
    }
    return { admitted, total: admitted.reduce((a, b) => a + b, 0), policies: [...policies], firstRateLimit };
  }

  it("admits the documented burst over three gateways, within one request, and states the fleet's policy", async () => {
    const started = Date.now();
    const [second, third] = await Promise.all([startGateway(), startGateway()]);
    const fleet = live();
    expect(fleet).toHaveLength(3);
    // Each gateway counts itself before it listens; the others count it at their next beat.
    const joined = Math.max(...[second, third].map((g) => loggedAt(g, "gateway fleet size", {}, 0)!));
    expect(await untilCounted(fleet, 3, joined, INTERVAL, started)).toBeLessThanOrEqual(INTERVAL + SEEN);
    expect(await Promise.all(fleet.map(fleetSizeOf))).toEqual([3, 3, 3]); // the gauge says the same
    const seen = await burst(fleet, 50);
    // 100/3 = 33 1/3 per gateway: 33 each, 99 in all. Not 300 (no split) and not 33 (one share).
    expect(seen.admitted).toEqual([33, 33, 33]);
    expect(seen.total).toBe(99);
    // Every response, from every gateway, states the documented fleet-wide policy. r is what the
    // fleet admits now: 3 × the 32 whole tokens left in the first gateway's share of 33 1/3; t is
    // when the fleet is full again: three tokens spent (one per share) at 0.1/s.
    expect(seen.policies).toEqual(['"default";q=100;w=1000']);
    expect(seen.firstRateLimit).toBe('"default";r=96;t=30');
  });

  it("gives the two gateways left after a SIGTERM the whole burst within one heartbeat interval of its leaving", async () => {
    const [first, second, third] = live();
    const stopped = Date.now();
    expect(await third!.stop("SIGTERM")).toBe(0);
    expect(await memberRows()).toBe(2); // it deleted its row before exiting
    const leftAt = await untilLogged(third!, "left the fleet");
    // Only once it had stopped serving (its last request line comes before): the fleet never
    // admits more than the limit because of a stopping gateway.
    expect(leftAt).toBeGreaterThanOrEqual(await untilLogged(third!, "shutting down"));
    const left = [first!, second!];
    expect(await untilCounted(left, 2, leftAt, INTERVAL, stopped)).toBeLessThanOrEqual(INTERVAL + SEEN);
    const seen = await burst(left, 75);
    expect(seen.admitted).toEqual([50, 50]);
    expect(seen.total).toBe(BURST);
  });

  it("counts a joining gateway at once on it and within one interval on the others, shrinking each share", async () => {
    const started = Date.now();
    const fourth = await startGateway();
    // It counted itself and the two live others before it listened.
    const joined = loggedAt(fourth, "gateway fleet size", { fleetSize: 3 }, 0)!;
    expect(joined).toBeLessThanOrEqual(loggedAt(fourth, "listening", {}, 0)!);
    const fleet = live();
    expect(await untilCounted(fleet, 3, joined, INTERVAL, started)).toBeLessThanOrEqual(INTERVAL + SEEN);
    const seen = await burst(fleet, 50);
    expect(seen.admitted).toEqual([33, 33, 33]);
  });

  it("gives the two gateways left after a kill -9 the whole burst within window + interval of the death", async () => {
    const [first, second, fourth] = live();
    const killed = Date.now();
    second!.child.kill("SIGKILL");
    expect(await second!.exited).toBe("SIGKILL");
    expect(await memberRows()).toBe(3);
    const left = [first!, fourth!];
    // It left its row behind: the others count it until its last heartbeat is older than the window.
    const elapsed = await untilCounted(left, 2, killed, WINDOW + INTERVAL);
    // Counted out by age: not before its last heartbeat (one interval before the kill at the
    // earliest, give or take its timer's lateness) is a window old.
    expect(elapsed).toBeGreaterThanOrEqual(WINDOW - INTERVAL - SEEN);
    expect(elapsed).toBeLessThanOrEqual(WINDOW + INTERVAL + SEEN);
    expect(await memberRows()).toBe(2); // the beat that counted it out deleted its row
    const seen = await burst(left, 75);
    expect(seen.admitted).toEqual([50, 50]);
    expect(seen.total).toBe(BURST);
  });

  it("shrinks every share to a quarter when the fleet grows to four, still admitting the burst", async () => {
    const started = Date.now();
    const [fifth, sixth] = await Promise.all([startGateway(), startGateway()]);
    const fleet = live();
    expect(fleet).toHaveLength(4);
    const joined = Math.max(...[fifth, sixth].map((g) => loggedAt(g, "gateway fleet size", {}, 0)!));
    expect(await untilCounted(fleet, 4, joined, INTERVAL, started)).toBeLessThanOrEqual(INTERVAL + SEEN);
    const seen = await burst(fleet, 40);
    expect(seen.admitted).toEqual([25, 25, 25, 25]);
    expect(seen.total).toBe(BURST);
  });
});
