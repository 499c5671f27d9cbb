/**
 * What `npm start` tells each service: its own environment passed through, with the stack's
 * values (database, NATS, secrets key, listeners, downstream addresses) laid over it.
 */

export type Environment = Record<string, string | undefined>;

export type StackServiceName = "catalog" | "notify" | "webhooks" | "gateway";

/** One port the stack binds: the launcher's variable, and what the service calls it. */
export interface StackPort {
  /** The variable the operator sets for `npm start` (`CATALOG_GRPC_PORT`). */
  variable: string;
  service: StackServiceName;
  /** The variable the service itself reads (`GRPC_PORT`). */
  serviceVariable: "PORT" | "GRPC_PORT" | "METRICS_PORT";
  /** The field of the service's listening line that tells the bound port. */
  listeningField: "port" | "grpcPort" | "metricsPort";
  fallback: number;
}

export const STACK_PORTS: readonly StackPort[] = [
  { variable: "PORT", service: "gateway", serviceVariable: "PORT", listeningField: "port", fallback: 8080 },
  {
    variable: "GATEWAY_METRICS_PORT",
    service: "gateway",
    serviceVariable: "METRICS_PORT",
    listeningField: "metricsPort",
    fallback: 9464,
  },
  {
    variable: "CATALOG_GRPC_PORT",
    service: "catalog",
    serviceVariable: "GRPC_PORT",
    listeningField: "grpcPort",
    fallback: 50051,
  },
  {
    variable: "CATALOG_METRICS_PORT",
    service: "catalog",
    serviceVariable: "METRICS_PORT",
    listeningField: "metricsPort",
    fallback: 9465,
  },
  {
    variable: "NOTIFY_GRPC_PORT",
    service: "notify",
    serviceVariable: "GRPC_PORT",
    listeningField: "grpcPort",
    fallback: 50052,
  },
  {
    variable: "NOTIFY_METRICS_PORT",
    service: "notify",
    serviceVariable: "METRICS_PORT",
    listeningField: "metricsPort",
    fallback: 9466,
  },
  {
    variable: "WEBHOOKS_GRPC_PORT",
    service: "webhooks",
    serviceVariable: "GRPC_PORT",
    listeningField: "grpcPort",
    fallback: 50053,
  },
  {
    variable: "WEBHOOKS_METRICS_PORT",
    service: "webhooks",
    serviceVariable: "METRICS_PORT",
    listeningField: "metricsPort",
    fallback: 9467,
  },
];

/** Every listener `npm start` creates binds this address: loopback unless the operator says otherwise. */
/** Every port of the stack left to the system (0), for a test stack beside others: `{ PORT: "0", ... }`. */
export const ANY_PORTS: Record<string, string> = Object.fromEntries(STACK_PORTS.map((port) => [port.variable, "0"]));

/** `stack.env`, the addresses `npm start` records for the admin CLI: one `NAME=value` per line. */
export function formatStackEnv(env: Record<string, string>): string {
  return (
    Object.entries(env)
      .map(([name, value]) => `${name}=${value}`)
      .join("\n") + "\n"
  );
}

/** What `formatStackEnv` wrote (a value may hold `=`). */
export function parseStackEnv(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .trim()
      .split("\n")
      .map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]),
  );
}

export const DEFAULT_BIND_HOST = "127.0.0.1";

export class StackSettingError extends Error {
  override name = "StackSettingError";
}

/** A port the stack will ask for: the configured number (0 = any free port) and its variable. */
export interface ConfiguredPort extends StackPort {
  port: number;
  /** Which process of the service (0 = the first); replica r asks for the variable's port + r x offset. */
  replica: number;
  /** What each further replica adds to the variable's port: 1 for the gateway's PORT, else 10. */
  offset: number;
}

export const STACK_SERVICES: readonly StackServiceName[] = ["catalog", "notify", "webhooks", "gateway"];
/** Processes per service; at most MAX_REPLICAS, so replicas' ports (+10 each) never meet another service's. */
export type Replicas = Record<StackServiceName, number>;
export const MAX_REPLICAS = 10;
export const ONE_OF_EACH: Replicas = { catalog: 1, notify: 1, webhooks: 1, gateway: 1 };

/**
 * STACK_REPLICAS (`catalog=3,notify=2,webhooks=2,gateway=2`): how many processes of each service
 * `npm start` runs; a service not named runs one. Throws one line naming what is wrong.
 */
export function parseReplicas(text: string | undefined): Replicas {
  const replicas = { ...ONE_OF_EACH };
  if (text === undefined || text.trim() === "") return replicas;
  for (const item of text.split(",")) {
    const [name = "", count, ...rest] = item.trim().split("=");
    if (!(STACK_SERVICES as readonly string[]).includes(name)) {
      throw new StackSettingError(
        `STACK_REPLICAS=${JSON.stringify(text)}: unknown service ${JSON.stringify(name)} (one of ${STACK_SERVICES.join(", ")}, as catalog=3,gateway=2)`,
      );
    }
    const n = count === undefined || rest.length > 0 || !/^\d+$/.test(count.trim()) ? NaN : Number(count);
    if (!Number.isInteger(n) || n < 1 || n > MAX_REPLICAS) {
      throw new StackSettingError(
        `STACK_REPLICAS=${JSON.stringify(text)}: ${name} needs a whole number of processes from 1 to ${MAX_REPLICAS}, not ${JSON.stringify(count ?? "")}`,
      );
    }
    replicas[name as StackServiceName] = n;
  }
  return replicas;
}

/**
 * The ports `npm start` binds, from the launcher's environment, for every replica of every
 * service: replica r of a service asks for its variable's port + r x 10 (the gateway's PORT:
 * + r, so gateways answer on 8080, 8081, ...), and 0 stays 0. Throws naming each bad variable.
 */
export function configuredPorts(environment: Environment, replicas: Replicas = ONE_OF_EACH): ConfiguredPort[] {
  const bad: string[] = [];
  const ports = STACK_PORTS.flatMap((entry) => {
    const text = environment[entry.variable];
    const port = text === undefined || text === "" ? entry.fallback : Number(text);
    const offset = entry.variable === "PORT" ? 1 : 10;
    const count = replicas[entry.service];
    if (!Number.isInteger(port) || port < 0 || port + (port === 0 ? 0 : (count - 1) * offset) > 65535) {
      bad.push(`${entry.variable}=${JSON.stringify(text)}`);
    }
    return Array.from({ length: count }, (_, replica) => ({
      ...entry,
      port: port === 0 ? 0 : port + replica * offset,
      replica,
      offset,
    }));
  });
  if (bad.length > 0) throw new StackSettingError(`not a port (0-65535): ${bad.join(", ")}`);
  return ports;
}

/** How a replica is named in the launcher's lines: `catalog`, then `catalog-2`, `catalog-3`. */
export function replicaName(service: StackServiceName, replica: number): string {
  return replica === 0 ? service : `${service}-${replica + 1}`;
}

/** STACK_BIND_HOST, else 127.0.0.1. HOST / GRPC_HOST / METRICS_HOST in the environment do not count (shells set HOST). */
export function bindHost(environment: Environment): string {
  const host = environment.STACK_BIND_HOST;
  return host === undefined || host === "" ? DEFAULT_BIND_HOST : host;
}

/** The values the stack decides for every service; they win over the launcher's environment. */
export interface StackValues {
  databaseUrl: string;
  natsUrl: string | undefined;
  secretsKey: string;
  bindHost: string;
}

/**
 * One service's environment: the launcher's own (every documented setting, and every later one,
 * reaches the service), then LOG_LEVEL=info if unset, then the stack's values, which win.
 * `ports` are the service's own (`GRPC_PORT`, `METRICS_PORT` / `PORT`); `extra` the gateway's
 * downstream addresses.
 */
export function serviceEnvironment(
  launcher: Environment,
  stack: StackValues,
  ports: Record<string, number>,
  extra: Record<string, string> = {},
): Record<string, string> {
  const passed: Record<string, string> = {};
  for (const [name, value] of Object.entries(launcher)) if (value !== undefined) passed[name] = value;
  return {
    LOG_LEVEL: "info",
    ...passed,
    DATABASE_URL: stack.databaseUrl,
    ...(stack.natsUrl === undefined ? {} : { NATS_URL: stack.natsUrl }),
    SECRETS_KEY: stack.secretsKey,
    HOST: stack.bindHost,
    GRPC_HOST: stack.bindHost,
    METRICS_HOST: stack.bindHost,
    ...Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, String(port)])),
    ...extra,
  };
}

/** host:port to reach a listener bound to `host` from this machine (a wildcard is reached on loopback). */
export function localAddress(host: string, port: number): string {
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return reachable.includes(":") ? `[${reachable}]:${port}` : `${reachable}:${port}`;
}
