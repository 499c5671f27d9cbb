/**
 * A nats-server of a test's own (a private port and store), to stop and start under a service; and
 * a cluster of them (routes between them on loopback) for the JetStream replica tests.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { connect as connectTcp } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@platform/local-stack/embedded-postgres";
import { eventually } from "@platform/local-stack/https-receiver";
import { connect } from "nats";

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTcp({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

export async function startNatsServer(port: number, storeDir: string): Promise<ChildProcess> {
  const child = spawn("nats-server", ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", storeDir], {
    stdio: "ignore",
  });
  await eventually("nats-server answering", () => answers(port), 20_000);
  return child;
}

export async function stopNatsServer(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill(signal);
  await exited;
}

/** One server of a test's nats-server cluster. */
export interface ClusterServer {
  /** Its server name (unique per run), as JetStream names stream and consumer leaders. */
  name: string;
  port: number;
  url: string;
  process: ChildProcess;
}

/** A JetStream cluster of the test's own on loopback: free ports, its own stores, unique names. */
export interface NatsCluster {
  servers: ClusterServer[];
  /** Every server's client URL, comma-separated (NATS_URL's form). */
  url: string;
  /** The server of that name. */
  server(name: string): ClusterServer;
  /** Ends every server still running (SIGKILL) and removes their stores. */
  stop(): Promise<void>;
}

/**
 * `size` nats-servers with JetStream, each with its own client and route port (free ones) and its
 * own store under a temp dir, routed to the others, in a cluster of a unique name. Resolves once
 * every server answers JetStream requests (the meta leader is elected and each has joined); on a
 * failure it stops what it started.
 */
export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  const cluster = `c${randomBytes(4).toString("hex")}`;
  const root = await mkdtemp(join(tmpdir(), `nats-${cluster}-`));
  const servers: ClusterServer[] = [];
  const stop = async () => {
    await Promise.all(servers.map((server) => stopNatsServer(server.process, "SIGKILL")));
    await rm(root, { recursive: true, force: true });
  };
  try {
    const ports: number[] = [];
    while (ports.length < size * 2) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    const routePorts = ports.slice(size);
    for (let i = 0; i < size; i++) {
      const name = `${cluster}-n${i + 1}`;
      const port = ports[i]!;
      const routes = routePorts.filter((_, j) => j !== i).map((p) => `nats://127.0.0.1:${p}`);
      const child = spawn(
        "nats-server",
        [
          ...["-js", "-a", "127.0.0.1", "-p", String(port), "-n", name, "-sd", join(root, name)],
          ...["--cluster_name", cluster, "--cluster", `nats://127.0.0.1:${routePorts[i]!}`],
          ...["--routes", routes.join(","), "-l", join(root, `${name}.log`)],
        ],
        { stdio: "ignore" },
      );
      servers.push({ name, port, url: `nats://127.0.0.1:${port}`, process: child });
    }
    for (const server of servers) {
      await eventually(`nats-server ${server.name} answering`, () => answers(server.port), 20_000);
    }
    // JetStream answers only once the meta group has a leader and the server has caught up with it.
    for (const server of servers) {
      const nc = await connect({ servers: server.url });
      try {
        const jsm = await nc.jetstreamManager({ checkAPI: false });
        await eventually(
          `JetStream ready on ${server.name}`,
          () =>
            jsm.getAccountInfo().then(
              () => true,
              () => false,
            ),
          30_000,
        );
      } finally {
        await nc.close();
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    servers,
    url: servers.map((server) => server.url).join(","),
    server(name) {
      const found = servers.find((server) => server.name === name);
      if (!found) throw new Error(`no server ${name} in cluster ${cluster}`);
      return found;
    },
    stop,
  };
}
