import { createServer } from "node:net";
import type { ConfiguredPort } from "./stack-environment.js";

/** Why a port cannot be bound: `EADDRINUSE` (something listens there) or another bind error. */
export interface BusyPort extends ConfiguredPort {
  reason: string;
}

/** Binds and releases host:port; resolves with the bind error's code, or undefined when it is free. */
function bindError(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/** Every configured, non-zero port that cannot be bound on host right now (checked before anything starts). */
export async function findBusyPorts(ports: ConfiguredPort[], host: string): Promise<BusyPort[]> {
  const checked = await Promise.all(
    ports.filter((p) => p.port !== 0).map(async (p) => ({ ...p, reason: await bindError(host, p.port) })),
  );
  return checked.filter((p): p is BusyPort => p.reason !== undefined);
}

/** Also configured twice: two variables with the same port cannot both bind it. */
export function duplicatePorts(ports: ConfiguredPort[]): BusyPort[] {
  const seen = new Map<number, ConfiguredPort>();
  const duplicates: BusyPort[] = [];
  for (const p of ports) {
    if (p.port === 0) continue;
    const first = seen.get(p.port);
    if (first) duplicates.push({ ...p, reason: `same as ${first.variable}` });
    else seen.set(p.port, p);
  }
  return duplicates;
}

/** One message naming every busy port and the variable that moves it. */
export function describeBusyPorts(busy: BusyPort[], host: string): string {
  const list = busy
    .map(
      (p) =>
        `${p.port} (${p.variable}${p.replica > 0 ? ` + ${p.replica * p.offset}, ${p.service} replica ${p.replica + 1}` : ""}` +
        `${p.reason === "EADDRINUSE" ? "" : `: ${p.reason}`})`,
    )
    .join(", ");
  return (
    `cannot start: ${busy.length === 1 ? "port" : "ports"} ${list} on ${host} ` +
    `${busy.length === 1 ? "is" : "are"} not free; stop what uses ${busy.length === 1 ? "it" : "them"} ` +
    `or move the service${busy.length === 1 ? "" : "s"} by setting ${[...new Set(busy.map((p) => p.variable))].join(", ")} ` +
    `(0 = any free port)`
  );
}

/**
 * When a service could not bind during start-up (another process took the port after the check),
 * the configured ports its error names, so the message can say which variable moves each.
 */
export function portsNamedIn(message: string, ports: ConfiguredPort[]): ConfiguredPort[] {
  if (!/EADDRINUSE/.test(message)) return [];
  const named = new Set([...message.matchAll(/EADDRINUSE[^\]\n"]*:(\d+)/g)].map((m) => Number(m[1])));
  return ports.filter((p) => p.port !== 0 && named.has(p.port));
}
