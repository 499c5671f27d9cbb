/** A nats-server of a test's own (a private port and store), to stop and start under a service. */
import { spawn, type ChildProcess } from "node:child_process";
import { connect as connectTcp } from "node:net";
import { eventually } from "@platform/local-stack/https-receiver";

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
