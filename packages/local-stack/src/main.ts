/**
 * `npm start`: the whole stack as local processes — catalog, notify, webhooks and the gateway —
 * over Postgres and NATS (found, or started: see infrastructure.ts), supervised like a kubelet
 * would: a service that dies is restarted with backoff on the same ports. SIGINT, SIGTERM or
 * SIGHUP to this process stops everything; so does a failed start. While the stack runs, its
 * data directory holds `stack.env` (the addresses the admin CLI uses) and `stack.pid` (this
 * process), so a second start of the same checkout says the stack already seems to run.
 *
 * Every service gets this process's whole environment (so every documented setting reaches it),
 * overlaid with the stack's own values: DATABASE_URL, NATS_URL, SECRETS_KEY, HOST / GRPC_HOST /
 * METRICS_HOST (STACK_BIND_HOST, default 127.0.0.1), its ports, and the gateway's CATALOG_ADDR /
 * NOTIFY_ADDR / WEBHOOKS_ADDR. The table in docs/operations.md says which variable is set and which passed.
 *
 * The launcher's own variables (all optional):
 *   DATABASE_URL, NATS_URL       use these servers instead of looking for / starting local ones
 *   PORT                         gateway HTTP port (8080)
 *   CATALOG_GRPC_PORT, NOTIFY_GRPC_PORT, WEBHOOKS_GRPC_PORT   (50051, 50052, 50053)
 *   GATEWAY_METRICS_PORT, CATALOG_METRICS_PORT, NOTIFY_METRICS_PORT, WEBHOOKS_METRICS_PORT
 *                                (9464, 9465, 9466, 9467); 0 = any free port
 *   STACK_REPLICAS               processes per service, e.g. catalog=3,notify=2,webhooks=2,gateway=2 (1 each):
 *                                replica r takes each port + r x 10 (the gateway's PORT + r), and the
 *                                gateways get every catalog / notify / webhooks replica's address
 *   STACK_BIND_HOST              address every listener binds (127.0.0.1)
 *   SECRETS_KEY                  32 bytes, base64; else generated once into the data dir
 *   STACK_DATA_DIR               where local state lives (<repo>/.data)
 *   STACK_POSTGRES_PROBE_URL     the local Postgres to look for (postgres://postgres@127.0.0.1:5432/postgres)
 *   STACK_EMBEDDED_PG_PORT       port of the embedded Postgres fallback (54329)
 *   STACK_NATS_PORT              port of the nats-server fallback (4223)
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describeBusyPorts, duplicatePorts, findBusyPorts, portsNamedIn } from "./busy-ports.js";
import { provisionNats, provisionPostgres, provisionSecretsKey, type Provisioned } from "./infrastructure.js";
import {
  bindHost,
  configuredPorts,
  localAddress,
  formatStackEnv,
  parseReplicas,
  replicaName,
  serviceEnvironment,
  StackSettingError,
  type Replicas,
  type ConfiguredPort,
  type StackServiceName,
  type StackValues,
} from "./stack-environment.js";
import { superviseService, type SupervisedService } from "./supervised-service.js";

const repo = join(import.meta.dirname, "..", "..", "..", "..");
const launcherEnv = process.env;
const say = (line: string) => process.stdout.write(`[stack] ${line}\n`);
const entry = (service: string) => join(repo, "services", service, "dist", "src", "main.js");

const infrastructure: Provisioned[] = [];
const services: SupervisedService[] = [];
let stopping = false;
const dataDir = launcherEnv.STACK_DATA_DIR ?? join(repo, ".data");
/** This launcher's pid while its stack runs, so a second `npm start` of the checkout can say so. */
const pidFile = join(dataDir, "stack.pid");
let wrotePidFile = false;

/**
 * Stops every service (started, starting or waiting to restart), then what infrastructure
 * started, then exits. Says "stopping" only when there is something to stop.
 */
async function stopAll(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    if (services.length > 0 || infrastructure.length > 0) say("stopping");
    await Promise.all(services.map((s) => s.stop()));
    for (const item of infrastructure.reverse()) await item.stop().catch(() => undefined);
    if (wrotePidFile) await rm(pidFile, { force: true });
    process.exit(code);
  }
  return new Promise<never>(() => undefined);
}

/** The pid of this checkout's (this data directory's) stack when one still runs, from its stack.pid. */
async function runningStackPid(): Promise<number | undefined> {
  const pid = Number((await readFile(pidFile, "utf8").catch(() => "")).trim());
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
  try {
    process.kill(pid, 0); // only asks whether it exists
    return pid;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM" ? pid : undefined;
  }
}

function failStart(message: string, ports: ConfiguredPort[]): Promise<never> {
  if (stopping) return new Promise<never>(() => undefined);
  const named = portsNamedIn(message, ports);
  if (named.length > 0) {
    say(
      describeBusyPorts(
        named.map((p) => ({ ...p, reason: "EADDRINUSE" })),
        bindHost(launcherEnv),
      ),
    );
  } else {
    say(`start-up failed: ${message}`);
  }
  return stopAll(1);
}

async function main(): Promise<void> {
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => void stopAll(0));
  }
  // Whoever read our output is gone (a closed pipe): nobody is watching the stack any more.
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => void stopAll(1));
  let ports: ConfiguredPort[] = [];
  let replicas: Replicas;
  try {
    replicas = parseReplicas(launcherEnv.STACK_REPLICAS);
  } catch (error) {
    if (!(error instanceof StackSettingError)) throw error;
    say(`cannot start: ${error.message}`);
    process.exit(2);
  }
  try {
    ports = configuredPorts(launcherEnv, replicas);
    const host = bindHost(launcherEnv);
    // Before anything starts: every port that is taken, named with the variable that moves it.
    const busy = [...duplicatePorts(ports), ...(await findBusyPorts(ports, host))];
    if (busy.length > 0) {
      const running = await runningStackPid();
      if (running !== undefined) {
        say(
          `cannot start: this checkout's stack already seems to run (pid ${running}, recorded in ${pidFile}), ` +
            `holding ports ${busy.map((p) => p.port).join(", ")}: use it, or stop it first (Ctrl-C in its terminal, ` +
            `or kill ${running}); a second stack needs its own STACK_DATA_DIR and other ports (0 = any free port)`,
        );
      } else {
        say(describeBusyPorts(busy, host));
      }
      await stopAll(1);
      return;
    }

    await mkdir(dataDir, { recursive: true });
    const postgres = await provisionPostgres({
      databaseUrl: launcherEnv.DATABASE_URL,
      probeUrl: launcherEnv.STACK_POSTGRES_PROBE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
      dataDir,
      embeddedPort: Number(launcherEnv.STACK_EMBEDDED_PG_PORT ?? 54329),
      log: say,
    });
    infrastructure.push(postgres);
    say(`Postgres: ${postgres.source}`);
    const nats = await provisionNats({
      natsUrl: launcherEnv.NATS_URL,
      dataDir,
      fallbackPort: Number(launcherEnv.STACK_NATS_PORT ?? 4223),
      log: say,
    });
    if (nats) {
      infrastructure.push(nats);
      say(`NATS: ${nats.source}`);
    }
    const stack: StackValues = {
      databaseUrl: postgres.url,
      natsUrl: nats?.url,
      secretsKey: await provisionSecretsKey(launcherEnv.SECRETS_KEY, dataDir),
      bindHost: host,
    };
    if (stopping) return;

    const supervise = (name: StackServiceName, replica: number, extra: Record<string, string> = {}) => {
      const own = ports.filter((p) => p.service === name && p.replica === replica);
      const supervised = superviseService({
        name: replicaName(name, replica),
        entry: entry(name),
        env: serviceEnvironment(
          launcherEnv,
          stack,
          Object.fromEntries(own.map((p) => [p.serviceVariable, p.port])),
          extra,
        ),
        pinnedPorts: Object.fromEntries(own.map((p) => [p.listeningField, p.serviceVariable])),
        say,
        onEarlyExit: (reason) => void failStart(reason, ports),
      });
      services.push(supervised);
      return supervised.started;
    };
    const all = (name: StackServiceName, extra?: Record<string, string>) =>
      Promise.all(Array.from({ length: replicas[name] }, (_, replica) => supervise(name, replica, extra)));
    // The first replica of each service migrates its schema; the others start once it is up.
    const firsts = await Promise.all([supervise("catalog", 0), supervise("notify", 0), supervise("webhooks", 0)]);
    if (stopping) return;
    const others = await Promise.all(
      (["catalog", "notify", "webhooks"] as const).map((name) =>
        Promise.all(Array.from({ length: replicas[name] - 1 }, (_, i) => supervise(name, i + 1))),
      ),
    );
    if (stopping) return;
    // Restarts reuse the ports the first start got, so these addresses stay valid. Several
    // replicas: a list the gateway's gRPC clients balance every call over (round_robin).
    const addressesOf = (i: number) =>
      [firsts[i]!, ...others[i]!].map((line) => localAddress(host, line.grpcPort as number)).join(",");
    const addresses = {
      CATALOG_ADDR: addressesOf(0),
      NOTIFY_ADDR: addressesOf(1),
      WEBHOOKS_ADDR: addressesOf(2),
    };
    const gateways = await all("gateway", addresses);
    if (stopping) return;
    for (const service of services) service.heal();

    // The admin CLI reads this when DATABASE_URL / NOTIFY_ADDR are not set.
    const stackEnv = { DATABASE_URL: postgres.url, ...addresses, ...(nats ? { NATS_URL: nats.url } : {}) };
    await writeFile(join(dataDir, "stack.env"), formatStackEnv(stackEnv));
    await writeFile(pidFile, `${process.pid}\n`);
    wrotePidFile = true;
    for (const gateway of gateways) say(`Gateway ready at http://${localAddress(host, gateway.port as number)}`);
    if (gateways.length > 1) say("Several gateways: pick any one (in Kubernetes, the gateway's Service balances them)");
    say("Create an API key: npm run -s admin -- key create --name me");
  } catch (error) {
    await failStart(error instanceof Error ? error.message : String(error), ports);
  }
}

void main();
