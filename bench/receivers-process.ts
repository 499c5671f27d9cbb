import { fork, type ChildProcess } from "node:child_process";
import { join } from "node:path";

/**
 * Forks a receivers script of bench/ (webhooks-receivers.js, webhooks-retry-receivers.js) with
 * RECEIVERS receivers on the given TLS key and certificate, and waits for the ports it announces.
 */
export async function forkReceivers(
  script: string,
  options: { receivers: number; keyPath: string; certPath: string; env?: Record<string, string> },
): Promise<{ child: ChildProcess; ports: number[] }> {
  const child = fork(join(import.meta.dirname, script), [], {
    env: {
      PATH: process.env.PATH ?? "",
      RECEIVERS: String(options.receivers),
      RECEIVER_KEY: options.keyPath,
      RECEIVER_CERT: options.certPath,
      ...options.env,
    },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const ports = await new Promise<number[]>((resolve, reject) => {
    child.once("message", (m: { type: string; ports: number[] }) => resolve(m.ports));
    child.once("exit", (code) => reject(new Error(`the receivers exited (${code})`)));
  });
  return { child, ports };
}
