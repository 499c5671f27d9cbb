import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, readlink, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScratchDatabase, type ScratchDatabase } from "../src/postgres-databases.js";
import { deleteNamespaceStreams, newNatsNamespace } from "../src/nats-namespace.js";
import { startServiceProcess } from "../src/service-process.js";
import {
  adminCli,
  anyPorts,
  launch as launchStack,
  launcher,
  repo,
  runLauncher as runStackLauncher,
} from "./launcher.js";

const run = promisify(execFile);

/**
 * The JetStream namespace of this file's stacks: the webhooks service of every stack declares
 * its streams under it, and afterAll deletes them.
 */
const fileNatsNamespace = newNatsNamespace("stack");
const launch = (env: Record<string, string>) => launchStack(env, fileNatsNamespace);
const runLauncher = (command: string, args: string[], env: Record<string, string>) =>
  runStackLauncher(command, args, env, fileNatsNamespace);
/** The pid of every service process the launcher started so far (it says `starting <svc> (pid N)`). */
const startedPids = (lines: string[]) =>
  lines.flatMap((line) => {
    const match = /^\[stack\] starting ([\w-]+) \(pid (\d+)\)$/.exec(line);
    return match ? [{ service: match[1]!, pid: Number(match[2]) }] : [];
  });

/** The JSON log lines the services printed with the given msg. */
const logLines = (lines: string[], msg: string) =>
  lines.flatMap((line) => {
    if (!line.startsWith("{")) return [];
    const parsed = JSON.parse(line) as Record<string, unknown>;
    return parsed.msg === msg ? [parsed] : [];
  });

async function procStat(pid: number): Promise<{ state: string; ppid: number } | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  if (stat === undefined) return undefined;
  const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { state: state!, ppid: Number(ppid) };
}

/** True once the process no longer runs (gone, or a zombie waiting to be reaped). */
const isGone = async (pid: number) => ((await procStat(pid))?.state ?? "Z") === "Z";

async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function expectAllGone(pids: number[]) {
  for (const pid of pids) {
    await eventually(async () => ((await isGone(pid)) ? true : undefined), `pid ${pid} gone`);
  }
}

/** Every TCP socket `pid` listens on, as address:port, read from /proc. */
async function listeningSockets(pid: number): Promise<string[]> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "");
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
  }
  const sockets: string[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const row of (await readFile(table, "utf8")).trim().split("\n").slice(1)) {
      const [, local, , state, , , , , , inode] = row.trim().split(/\s+/);
      if (state !== "0A" || !inodes.has(inode!)) continue; // 0A = LISTEN
      const [hex, portHex] = local!.split(":");
      const address =
        hex!.length === 8
          ? (hex!.match(/../g) ?? [])
              .reverse()
              .map((b) => parseInt(b, 16))
              .join(".")
          : /^0+$/.test(hex!)
            ? "::"
            : `ipv6 ${hex}`;
      sockets.push(`${address}:${parseInt(portHex!, 16)}`);
    }
  }
  return sockets;
}

/** Listens on a free port of 127.0.0.1, as something else on the machine would. */
async function occupyPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as { port: number }).port, server };
}

const admin = async (env: Record<string, string>, ...args: string[]) =>
  JSON.parse(
    (await run(process.execPath, [adminCli, ...args], { env: { PATH: process.env.PATH ?? "", ...env } })).stdout,
  ) as Record<string, unknown>;

describe("npm start (the local stack launcher)", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  let scratch: ScratchDatabase;
  beforeAll(async () => {
    scratch = await createScratchDatabase("stack");
    cleanups.push(() => scratch.drop());
  });
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await deleteNamespaceStreams(fileNatsNamespace);
  });

  const dataDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), "stack-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    return dir;
  };

  describe("one stack, started with documented settings", () => {
    let stack: Awaited<ReturnType<typeof launch>>;
    let stackDir: string;
    const settings = {
      PROBLEM_BASE_URI: "https://docs.example.com/problems/",
      PUBLIC_BASE_URL: "https://api.example.com",
      RATE_LIMIT_PER_SECOND: "0.01", // no refill during the test, however slow the machine
      RATE_LIMIT_BURST: "3",
      API_KEY_CACHE_TTL: "7s",
      UPSTREAM_TIMEOUT: "4s",
      IDEMPOTENCY_TTL: "2h",
      SHUTDOWN_GRACE: "3s",
      // Shells export HOST; the stack's listeners follow STACK_BIND_HOST, not these.
      HOST: "0.0.0.0",
      GRPC_HOST: "0.0.0.0",
      METRICS_HOST: "0.0.0.0",
      SECRETS_KEY: Buffer.alloc(32, 7).toString("base64"),
    };

    beforeAll(async () => {
      stackDir = await dataDir();
      stack = await launch({ DATABASE_URL: scratch.url, STACK_DATA_DIR: stackDir, ...settings });
      cleanups.push(async () => {
        if (stack.child.exitCode === null) await stack.stop();
      });
    }, 90_000);

    it("is ready on the given database, and records it for the admin CLI", async () => {
      // The gateway's health checks of catalog and notify have a 1 s deadline each: on a busy
      // machine the first ones can miss it, so readiness is polled rather than read once.
      const ready = await eventually(async () => {
        const response = await fetch(`${stack.url}/readyz`);
        return response.status === 200 ? await response.json() : undefined;
      }, "readyz 200");
      expect(ready).toMatchObject({ checks: { catalog: "SERVING", notify: "SERVING" } });
      const stackEnv = await readFile(join(stackDir, "stack.env"), "utf8");
      expect(stackEnv).toContain(`DATABASE_URL=${scratch.url}`);
      expect(stackEnv).toMatch(/NOTIFY_ADDR=127\.0\.0\.1:\d+/);
    });

    it("answers a second start of the same checkout that its stack already seems to run, and stops nothing", async () => {
      const second = runLauncher(process.execPath, [launcher], {
        PATH: process.env.PATH ?? "",
        ...anyPorts,
        PORT: new URL(stack.url).port, // the first stack's gateway port: taken
        DATABASE_URL: scratch.url,
        STACK_DATA_DIR: stackDir,
      });
      expect(await second.exited).toBe(1);
      expect(second.lines).toEqual([
        expect.stringMatching(
          new RegExp(
            `^\\[stack\\] cannot start: this checkout's stack already seems to run \\(pid ${stack.child.pid}, .*` +
              `stop it first \\(Ctrl-C in its terminal, or kill ${stack.child.pid}\\)`,
          ),
        ),
      ]);
      expect(await readFile(join(stackDir, "stack.pid"), "utf8")).toBe(`${stack.child.pid}\n`);
    });

    it("passes its environment through: the gateway's settings change what partners see", async () => {
      // PROBLEM_BASE_URI: problem types on the tenant interface.
      const unauthenticated = await fetch(`${stack.url}/api/v1/tenants/t1`);
      expect(unauthenticated.status).toBe(401);
      expect(((await unauthenticated.json()) as { type: string }).type).toMatch(
        /^https:\/\/docs\.example\.com\/problems\/\S+$/,
      );
      // PUBLIC_BASE_URL: absolute Location. RATE_LIMIT_BURST=3: the fourth call of a key is refused.
      const { key } = (await admin({ DATABASE_URL: scratch.url }, "key", "create", "--name", "settings")) as {
        key: string;
      };
      const auth = { authorization: `Bearer ${key}` };
      const created = await fetch(`${stack.url}/v1/pets`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ name: "Rex", categoryId: 1 }),
      });
      expect(created.status).toBe(201);
      expect(created.headers.get("location")).toMatch(/^https:\/\/api\.example\.com\/v1\/pets\/\d+$/);
      const statuses = [created.status];
      for (let i = 0; i < 3; i++) statuses.push((await fetch(`${stack.url}/v1/pets`, { headers: auth })).status);
      expect(statuses).toEqual([201, 200, 200, 429]);
    });

    it("passes its environment through: every service reports the settings it reads, secrets redacted", () => {
      const configs = Object.fromEntries(
        logLines(stack.lines, "configuration").map((l) => [l.service as string, l.config as Record<string, unknown>]),
      );
      expect(Object.keys(configs).sort()).toEqual(["catalog", "gateway", "notify", "webhooks"]);
      for (const config of Object.values(configs)) expect(config.SHUTDOWN_GRACE).toBe(3_000);
      expect(configs.gateway).toMatchObject({ API_KEY_CACHE_TTL: 7_000, UPSTREAM_TIMEOUT: 4_000, RATE_LIMIT_BURST: 3 });
      expect(configs.notify).toMatchObject({ IDEMPOTENCY_TTL: 2 * 3_600_000 });
      expect(stack.lines.join("\n")).not.toContain(settings.SECRETS_KEY);
    });

    it("binds every listener it creates to 127.0.0.1, whatever HOST the environment has", async () => {
      const listening = logLines(stack.lines, "listening");
      expect(listening.map((l) => l.service).sort()).toEqual(["catalog", "gateway", "notify", "webhooks"]);
      for (const line of listening) {
        const sockets = await listeningSockets(line.pid as number);
        const ports = [line.port, line.grpcPort, line.metricsPort].filter((p) => typeof p === "number");
        expect(sockets.sort(), line.service as string).toEqual(ports.map((p) => `127.0.0.1:${p}`).sort());
      }
    });

    it("restarts a service killed with SIGKILL on the same ports, backing off, and serves again", async () => {
      const first = logLines(stack.lines, "listening").find((l) => l.service === "catalog")!;
      process.kill(first.pid as number, "SIGKILL");
      await stack.waitForLine(/^\[stack\] catalog exited \(SIGKILL\); restarting in 1s$/);
      const restarted = Number((await stack.waitForLine(/^\[stack\] catalog restarted \(pid (\d+)\)$/))[1]);
      const again = logLines(stack.lines, "listening").find((l) => l.pid === restarted)!;
      expect(again).toMatchObject({ service: "catalog", grpcPort: first.grpcPort, metricsPort: first.metricsPort });

      // Dying again soon after: the next wait is longer.
      process.kill(restarted, "SIGKILL");
      await stack.waitForLine(/^\[stack\] catalog exited \(SIGKILL\); restarting in 2s$/);
      await eventually(
        () =>
          Promise.resolve(
            stack.lines
              .map((line) => Number(/^\[stack\] catalog restarted \(pid (\d+)\)$/.exec(line)?.[1]))
              .find((pid) => pid > 0 && pid !== restarted),
          ),
        "catalog restarted a second time",
      );

      // The gateway's address for the catalog is still right: partners are served again. (The
      // gateway's /readyz is its own database only, so it says nothing about the catalog: its
      // checks name the catalog's state, and the catalog's route answers again.)
      // A key may make RATE_LIMIT_BURST (3) calls in this stack and no more (no refill), and calls
      // answered 503 while the gateway's channel to the catalog still reconnects spend them too:
      // a fresh key for every three attempts, made before the clock starts.
      const keys = await Promise.all(
        Array.from(
          { length: 6 },
          async (_, i) =>
            ((await admin({ DATABASE_URL: scratch.url }, "key", "create", "--name", `after-${i}`)) as { key: string })
              .key,
        ),
      );
      await eventually(async () => {
        const readiness = (await (await fetch(`${stack.url}/readyz`)).json()) as { checks: Record<string, string> };
        return readiness.checks.catalog === "SERVING" ? true : undefined;
      }, "readyz names the catalog SERVING after the restart");
      // The gateway's own channel reconnects within its capped backoff (service-kit RECONNECT_BACKOFF,
      // 1 s): with grpc-js's default backoff it took tens of seconds after two quick deaths.
      const answers: (number | string)[] = [];
      const list = await eventually(
        async () => {
          const key = keys[Math.floor(answers.length / 3)];
          if (key === undefined) return undefined;
          const answer = await fetch(`${stack.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } }).catch(
            (error: Error) => {
              answers.push(error.message);
              throw error;
            },
          );
          answers.push(answer.status);
          return answer.status === 200 ? answer : undefined;
        },
        "GET /v1/pets 200 within 3 s of the catalog serving again",
        3_000,
      ).catch((error: Error) => {
        throw new Error(`${error.message} (answers: ${answers.join(", ")})`);
      });
      expect(Array.isArray(await list.json())).toBe(true);
    }, 60_000);

    it("stops every process it started, restarted ones included, on SIGTERM, and exits 0", async () => {
      const pids = startedPids(stack.lines).map((s) => s.pid);
      expect(pids.length).toBeGreaterThanOrEqual(6); // four services, catalog twice more
      expect(await stack.stop()).toBe(0);
      await expectAllGone(pids);
      await expect(fetch(`${stack.url}/healthz`)).rejects.toThrow();
      await expect(readFile(join(stackDir, "stack.pid"), "utf8")).rejects.toThrow(/ENOENT/);
    });
  });

  it("runs as `npm start`: SIGTERM to the npm process alone stops every service", async () => {
    const npmDataDir = await dataDir();
    const npm = runLauncher("npm", ["run", "-s", "start"], {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? tmpdir(),
      ...anyPorts,
      LOG_LEVEL: "warn",
      DATABASE_URL: scratch.url,
      STACK_DATA_DIR: npmDataDir,
    });
    const launcherProcess = { pid: undefined as number | undefined };
    cleanups.push(async () => {
      if (npm.child.exitCode === null) npm.child.kill("SIGKILL");
      for (const pid of [launcherProcess.pid, ...startedPids(npm.lines).map((s) => s.pid)]) {
        if (pid !== undefined && !(await isGone(pid))) process.kill(pid, "SIGKILL");
      }
    });
    await npm.waitForLine(/^\[stack\] Gateway ready at /, 120_000);
    const services = startedPids(npm.lines);
    expect(services.map((s) => s.service).sort()).toEqual(["catalog", "gateway", "notify", "webhooks"]);
    const launcherPid = (launcherProcess.pid = (await procStat(services[0]!.pid))!.ppid);
    // `exec`: the launcher replaced the shell, so npm's forwarded signal reaches it.
    expect((await procStat(launcherPid))!.ppid).toBe(npm.child.pid);

    // No SECRETS_KEY given: one is generated once into the data dir.
    expect((await readFile(join(npmDataDir, "secrets.key"), "utf8")).trim()).toMatch(/^[A-Za-z0-9+/]{43}=$/);

    process.kill(npm.child.pid!, "SIGTERM");
    await npm.exited;
    await expectAllGone([launcherPid, ...services.map((s) => s.pid)]);
  }, 150_000);

  it("each service on its own binds loopback by default (only the chart binds all interfaces)", async () => {
    const started = await Promise.all(
      (["catalog", "notify", "webhooks", "gateway"] as const).map((service) =>
        startServiceProcess({
          name: service,
          entry: join(repo, "services", service, "dist", "src", "main.js"),
          env: {
            DATABASE_URL: scratch.url,
            PORT: "0",
            GRPC_PORT: "0",
            METRICS_PORT: "0",
            LOG_LEVEL: "warn",
            SECRETS_KEY: Buffer.alloc(32, 9).toString("base64"),
            NATS_NAMESPACE: fileNatsNamespace,
          },
        }),
      ),
    );
    try {
      for (const service of started) {
        const sockets = await listeningSockets(service.pid);
        expect(sockets.length, service.name).toBe(2);
        for (const socket of sockets) expect(socket, service.name).toMatch(/^127\.0\.0\.1:\d+$/);
      }
    } finally {
      await Promise.all(started.map((s) => s.stop()));
    }
  });

  it("leaves no orphans when the launcher itself is SIGKILLed: the services stop on their own", async () => {
    const stack = await launch({ DATABASE_URL: scratch.url, STACK_DATA_DIR: await dataDir() });
    const pids = startedPids(stack.lines).map((s) => s.pid);
    cleanups.push(async () => {
      for (const pid of pids) if (!(await isGone(pid))) process.kill(pid, "SIGKILL");
    });
    stack.child.kill("SIGKILL");
    await stack.exited;
    await expectAllGone(pids);
  }, 90_000);

  it("a service whose supervisor dies stops itself, even in the middle of its start-up", async () => {
    // Stand-in supervisors: each spawns webhooks the way npm start does, says its pid, and is
    // SIGKILLed a moment later, so the service loses both its IPC channel and its stdout's reader.
    const serviceProcess = pathToFileURL(join(import.meta.dirname, "..", "dist", "src", "service-process.js")).href;
    const entry = join(repo, "services", "webhooks", "dist", "src", "main.js");
    const script = `
      import { spawnServiceProcess } from ${JSON.stringify(serviceProcess)};
      const service = spawnServiceProcess({
        name: "webhooks", entry: ${JSON.stringify(entry)}, inheritOutput: true, ownProcessGroup: true,
        env: { GRPC_PORT: "0", METRICS_PORT: "0", LOG_LEVEL: "debug" },
      });
      console.log(JSON.stringify({ pid: service.pid }));`;
    const pids = await Promise.all(
      [0, 100, 300].map(async (delayMs) => {
        const supervisor = runLauncher(process.execPath, ["--input-type=module", "-e", script], {
          PATH: process.env.PATH ?? "",
        });
        const pid = Number((await supervisor.waitForLine(/^\{"pid":(\d+)\}$/))[1]);
        cleanups.push(async () => {
          if (!(await isGone(pid))) process.kill(pid, "SIGKILL");
        });
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        supervisor.child.kill("SIGKILL");
        await supervisor.exited;
        return pid;
      }),
    );
    await expectAllGone(pids);
  }, 60_000);

  it("runs two catalog processes with STACK_REPLICAS=catalog=2, and the gateway's calls reach both", async () => {
    const stack = await launch({
      DATABASE_URL: scratch.url,
      STACK_DATA_DIR: await dataDir(),
      STACK_REPLICAS: "catalog=2",
      LOG_LEVEL: "info",
    });
    cleanups.push(async () => {
      if (stack.child.exitCode === null) await stack.stop();
    });
    expect(startedPids(stack.lines).map((s) => s.service)).toEqual(
      expect.arrayContaining(["catalog", "catalog-2", "notify", "webhooks", "gateway"]),
    );
    expect(startedPids(stack.lines)).toHaveLength(5);
    const catalogs = logLines(stack.lines, "listening").filter((l) => l.service === "catalog");
    expect(catalogs).toHaveLength(2);
    const { key } = (await admin({ DATABASE_URL: scratch.url }, "key", "create", "--name", "replicas")) as {
      key: string;
    };
    const handled = async (line: Record<string, unknown>) => {
      const text = await (await fetch(`http://127.0.0.1:${line.metricsPort as number}/metrics`)).text();
      return [...text.matchAll(/^grpc_server_handled_total\{[^}]*grpc_method="ListPets"[^}]*\} (\d+)$/gm)].reduce(
        (sum, m) => sum + Number(m[1]),
        0,
      );
    };
    const before = await Promise.all(catalogs.map(handled));
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${stack.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
    }
    const served = (await Promise.all(catalogs.map(handled))).map((n, i) => n - before[i]!);
    expect(served[0]! + served[1]!).toBe(20);
    expect(Math.min(...served)).toBeGreaterThanOrEqual(5);
    expect(await stack.stop()).toBe(0);
  }, 90_000);

  it("refuses a bad STACK_REPLICAS in one line and exits 2 before starting anything", async () => {
    const running = runLauncher(process.execPath, [launcher], {
      PATH: process.env.PATH ?? "",
      ...anyPorts,
      STACK_REPLICAS: "catalog=3,mailer=2",
      DATABASE_URL: scratch.url,
      STACK_DATA_DIR: await dataDir(),
    });
    expect(await running.exited).toBe(2);
    expect(running.lines).toEqual([
      '[stack] cannot start: STACK_REPLICAS="catalog=3,mailer=2": unknown service "mailer" (one of catalog, notify, webhooks, gateway, as catalog=3,gateway=2)',
    ]);
  });

  it("refuses to start when ports are taken, naming every busy port's variable, and starts nothing", async () => {
    const [catalogPort, metricsPort] = await Promise.all([occupyPort(), occupyPort()]);
    cleanups.push(() =>
      Promise.all([catalogPort, metricsPort].map(({ server }) => new Promise((r) => server.close(r)))),
    );
    const running = runLauncher(process.execPath, [launcher], {
      PATH: process.env.PATH ?? "",
      ...anyPorts,
      CATALOG_GRPC_PORT: String(catalogPort.port),
      GATEWAY_METRICS_PORT: String(metricsPort.port),
      DATABASE_URL: scratch.url,
      STACK_DATA_DIR: await dataDir(),
    });
    expect(await running.exited).toBe(1);
    const output = running.lines.join("\n");
    expect(output).toContain(`${catalogPort.port} (CATALOG_GRPC_PORT)`);
    expect(output).toContain(`${metricsPort.port} (GATEWAY_METRICS_PORT)`);
    expect(startedPids(running.lines)).toEqual([]);
    expect(running.lines).not.toContain("[stack] stopping"); // nothing was started
  });

  it("fails the start when a service exits during start-up, and no process it started survives", async () => {
    const running = runLauncher(process.execPath, [launcher], {
      PATH: process.env.PATH ?? "",
      ...anyPorts,
      NOTIFY_CHANNEL_PROVIDER: "bogus", // only notify reads it: notify exits at once, the others are mid-start
      DATABASE_URL: scratch.url,
      STACK_DATA_DIR: await dataDir(),
    });
    const code = await running.exited;
    const started = startedPids(running.lines);
    cleanups.push(async () => {
      for (const { pid } of started) if (!(await isGone(pid))) process.kill(pid, "SIGKILL");
    });
    expect(code).toBe(1);
    expect(running.lines).toContainEqual(expect.stringMatching(/^\[stack\] start-up failed: notify exited \(1\)/));
    expect(started.map((s) => s.service).sort()).toEqual(["catalog", "notify", "webhooks"]);
    await expectAllGone(started.map((s) => s.pid));
  }, 60_000);

  it("falls back to an embedded Postgres when none is configured or answering", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "stack-embedded-"));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const stack = await launch({
      STACK_DATA_DIR: dataDir,
      STACK_POSTGRES_PROBE_URL: "postgres://postgres@127.0.0.1:1/postgres",
      STACK_EMBEDDED_PG_PORT: "0", // any free port, chosen by the kernel
    });
    try {
      const postgresLine = stack.lines.find((line) => line.startsWith("[stack] Postgres: "));
      expect(postgresLine).toMatch(/^\[stack\] Postgres: an embedded Postgres on port [1-9]\d*$/);
      // Ready once the gateway's first health checks of catalog and notify (1 s deadline each)
      // have answered in time, which on a busy machine can take more than one try.
      const readiness = async () => {
        const response = await fetch(`${stack.url}/readyz`);
        return `${response.status} ${await response.text()}`; // the checks, should it never become ready
      };
      await expect.poll(readiness, { timeout: 20_000, interval: 250 }).toMatch(/^200 /);
    } finally {
      expect(await stack.stop()).toBe(0);
    }
  }, 90_000);
});
