import { createServer, type Server } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { describeBusyPorts, duplicatePorts, findBusyPorts, portsNamedIn } from "./busy-ports.js";
import { configuredPorts } from "./stack-environment.js";

const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

async function listening(host: string): Promise<number> {
  const server = createServer();
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return (server.address() as { port: number }).port;
}

/** A port that was free a moment ago (bound and released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("busy ports", () => {
  it("finds every taken port, on loopback or on all interfaces, and skips port 0", async () => {
    const [onLoopback, onAll, free] = await Promise.all([listening("127.0.0.1"), listening("0.0.0.0"), freePort()]);
    const ports = configuredPorts({
      PORT: "0",
      CATALOG_GRPC_PORT: String(onLoopback),
      NOTIFY_GRPC_PORT: String(onAll),
      WEBHOOKS_GRPC_PORT: String(free),
      GATEWAY_METRICS_PORT: "0",
      CATALOG_METRICS_PORT: "0",
      NOTIFY_METRICS_PORT: "0",
      WEBHOOKS_METRICS_PORT: "0",
    });
    const busy = await findBusyPorts(ports, "127.0.0.1");
    expect(busy.map((p) => [p.variable, p.port, p.reason])).toEqual([
      ["CATALOG_GRPC_PORT", onLoopback, "EADDRINUSE"],
      ["NOTIFY_GRPC_PORT", onAll, "EADDRINUSE"],
    ]);
  });

  it("reports them all in one message, each with the variable that moves it", () => {
    const ports = configuredPorts({ CATALOG_GRPC_PORT: "6001", PORT: "6002" });
    const message = describeBusyPorts(
      ports.filter((p) => p.port > 6000 && p.port < 7000).map((p) => ({ ...p, reason: "EADDRINUSE" })),
      "127.0.0.1",
    );
    expect(message).toContain("6002 (PORT)");
    expect(message).toContain("6001 (CATALOG_GRPC_PORT)");
    expect(message).toMatch(/setting PORT, CATALOG_GRPC_PORT/);
  });

  it("catches two variables asking for the same port", () => {
    const duplicates = duplicatePorts(configuredPorts({ PORT: "7000", NOTIFY_METRICS_PORT: "7000" }));
    expect(duplicates.map((p) => [p.variable, p.reason])).toEqual([["NOTIFY_METRICS_PORT", "same as PORT"]]);
  });

  it("names the port (and so its variable) of a service's EADDRINUSE, from grpc-js or node:http", () => {
    const ports = configuredPorts({ CATALOG_GRPC_PORT: "50999", PORT: "8181" });
    const grpc =
      "catalog exited (1) before listening\n" +
      '{"msg":"No address added out of total 1 resolved errors: [listen EADDRINUSE: address already in use 127.0.0.1:50999]"}';
    expect(portsNamedIn(grpc, ports).map((p) => p.variable)).toEqual(["CATALOG_GRPC_PORT"]);
    const http = '{"msg":"listen EADDRINUSE: address already in use 127.0.0.1:8181"}';
    expect(portsNamedIn(http, ports).map((p) => p.variable)).toEqual(["PORT"]);
    expect(portsNamedIn("notify exited (1): IDEMPOTENCY_TTL: must be a duration 50999", ports)).toEqual([]);
  });
});
