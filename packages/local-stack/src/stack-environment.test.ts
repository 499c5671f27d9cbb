import { describe, expect, it } from "vitest";
import { describeBusyPorts, duplicatePorts } from "./busy-ports.js";
import {
  ANY_PORTS,
  bindHost,
  configuredPorts,
  formatStackEnv,
  localAddress,
  parseReplicas,
  parseStackEnv,
  replicaName,
  serviceEnvironment,
  STACK_PORTS,
  type StackValues,
} from "./stack-environment.js";

const stack: StackValues = {
  databaseUrl: "postgres://postgres@127.0.0.1:5432/platform",
  natsUrl: "nats://127.0.0.1:4222",
  secretsKey: "c2VjcmV0",
  bindHost: "127.0.0.1",
};

describe("what npm start tells each service", () => {
  it("passes every variable of its own environment through, documented or not yet", () => {
    const env = serviceEnvironment(
      {
        RATE_LIMIT_BURST: "3",
        WEBHOOKS_RETRY_DELAYS: "1s,2s",
        NOTIFY_CHANNEL_PROVIDER: "whatsapp",
        NODE_EXTRA_CA_CERTS: "/etc/ca.pem",
        LOG_LEVEL: "debug",
        UNSET: undefined,
      },
      stack,
      { GRPC_PORT: 50051 },
    );
    expect(env).toMatchObject({
      RATE_LIMIT_BURST: "3",
      WEBHOOKS_RETRY_DELAYS: "1s,2s",
      NOTIFY_CHANNEL_PROVIDER: "whatsapp",
      NODE_EXTRA_CA_CERTS: "/etc/ca.pem",
      LOG_LEVEL: "debug",
    });
    expect("UNSET" in env).toBe(false);
  });

  it("overlays the stack's own values, which win over the environment's", () => {
    const env = serviceEnvironment(
      {
        DATABASE_URL: "postgres://elsewhere/db",
        NATS_URL: "nats://elsewhere:4222",
        SECRETS_KEY: "other",
        HOST: "my-laptop.local",
        GRPC_HOST: "0.0.0.0",
        METRICS_HOST: "0.0.0.0",
        GRPC_PORT: "1",
        CATALOG_ADDR: "nowhere:1",
      },
      stack,
      { GRPC_PORT: 50051, METRICS_PORT: 9465 },
      { CATALOG_ADDR: "127.0.0.1:50051" },
    );
    expect(env).toMatchObject({
      DATABASE_URL: stack.databaseUrl,
      NATS_URL: stack.natsUrl,
      SECRETS_KEY: stack.secretsKey,
      HOST: "127.0.0.1",
      GRPC_HOST: "127.0.0.1",
      METRICS_HOST: "127.0.0.1",
      GRPC_PORT: "50051",
      METRICS_PORT: "9465",
      CATALOG_ADDR: "127.0.0.1:50051",
    });
  });

  it("defaults LOG_LEVEL to info and leaves NATS_URL out when there is no NATS", () => {
    const env = serviceEnvironment({}, { ...stack, natsUrl: undefined }, {});
    expect(env.LOG_LEVEL).toBe("info");
    expect("NATS_URL" in env).toBe(false);
  });

  it("binds loopback unless STACK_BIND_HOST says otherwise; HOST does not count", () => {
    expect(bindHost({})).toBe("127.0.0.1");
    expect(bindHost({ HOST: "0.0.0.0", STACK_BIND_HOST: "" })).toBe("127.0.0.1");
    expect(bindHost({ STACK_BIND_HOST: "0.0.0.0" })).toBe("0.0.0.0");
  });

  it("reaches a wildcard listener on loopback, and brackets IPv6", () => {
    expect(localAddress("0.0.0.0", 8080)).toBe("127.0.0.1:8080");
    expect(localAddress("192.168.1.5", 8080)).toBe("192.168.1.5:8080");
    expect(localAddress("::", 8080)).toBe("[::1]:8080");
  });

  it("reads every port variable with its default, and names each one that is not a port", () => {
    const ports = configuredPorts({ PORT: "0", CATALOG_GRPC_PORT: "6000" });
    expect(Object.fromEntries(ports.map((p) => [p.variable, p.port]))).toEqual({
      PORT: 0,
      GATEWAY_METRICS_PORT: 9464,
      CATALOG_GRPC_PORT: 6000,
      CATALOG_METRICS_PORT: 9465,
      NOTIFY_GRPC_PORT: 50052,
      NOTIFY_METRICS_PORT: 9466,
      WEBHOOKS_GRPC_PORT: 50053,
      WEBHOOKS_METRICS_PORT: 9467,
    });
    expect(() => configuredPorts({ PORT: "eighty", NOTIFY_GRPC_PORT: "70000" })).toThrow(
      /PORT="eighty", NOTIFY_GRPC_PORT="70000"/,
    );
  });
});

describe("STACK_REPLICAS: several processes of a service", () => {
  it("reads name=count pairs; a service not named runs once", () => {
    expect(parseReplicas(undefined)).toEqual({ catalog: 1, notify: 1, webhooks: 1, gateway: 1 });
    expect(parseReplicas("")).toEqual({ catalog: 1, notify: 1, webhooks: 1, gateway: 1 });
    expect(parseReplicas("catalog=3,notify=2, webhooks=2,gateway=2")).toEqual({
      catalog: 3,
      notify: 2,
      webhooks: 2,
      gateway: 2,
    });
    expect(parseReplicas("catalog=10")).toMatchObject({ catalog: 10, gateway: 1 });
  });

  it("refuses an unknown service, 0, more than 10 and anything not a whole number, in one line naming it", () => {
    expect(() => parseReplicas("catalg=2")).toThrow(
      'STACK_REPLICAS="catalg=2": unknown service "catalg" (one of catalog, notify, webhooks, gateway, as catalog=3,gateway=2)',
    );
    for (const [text, count] of [
      ["catalog=0", "0"],
      ["catalog=11", "11"],
      ["catalog=two", "two"],
      ["catalog=1.5", "1.5"],
      ["catalog=-1", "-1"],
      ["catalog", ""],
    ]) {
      expect(() => parseReplicas(text), text).toThrow(
        `STACK_REPLICAS=${JSON.stringify(text)}: catalog needs a whole number of processes from 1 to 10, not ${JSON.stringify(count)}`,
      );
    }
  });

  it("gives replica r each port + r x 10 (the gateway's PORT + r), keeps 0 as 0, and names replicas catalog, catalog-2, ...", () => {
    const ports = configuredPorts({}, { catalog: 3, notify: 1, webhooks: 1, gateway: 2 });
    const of = (variable: string) => ports.filter((p) => p.variable === variable).map((p) => p.port);
    expect(of("CATALOG_GRPC_PORT")).toEqual([50051, 50061, 50071]);
    expect(of("CATALOG_METRICS_PORT")).toEqual([9465, 9475, 9485]);
    expect(of("NOTIFY_GRPC_PORT")).toEqual([50052]);
    expect(of("PORT")).toEqual([8080, 8081]);
    expect(of("GATEWAY_METRICS_PORT")).toEqual([9464, 9474]);
    expect(duplicatePorts(configuredPorts({}, { catalog: 10, notify: 10, webhooks: 10, gateway: 10 }))).toEqual([]);
    expect(
      configuredPorts({ CATALOG_GRPC_PORT: "0" }, { catalog: 2, notify: 1, webhooks: 1, gateway: 1 })
        .filter((p) => p.variable === "CATALOG_GRPC_PORT")
        .map((p) => p.port),
    ).toEqual([0, 0]);
    expect(() =>
      configuredPorts({ CATALOG_GRPC_PORT: "65530" }, { catalog: 2, notify: 1, webhooks: 1, gateway: 1 }),
    ).toThrow('not a port (0-65535): CATALOG_GRPC_PORT="65530"');
    const replica = ports.find((p) => p.port === 50071)!;
    expect(replicaName(replica.service, replica.replica)).toBe("catalog-3");
    expect(replicaName("gateway", 0)).toBe("gateway");
    expect(describeBusyPorts([{ ...replica, reason: "EADDRINUSE" }], "127.0.0.1")).toBe(
      "cannot start: port 50071 (CATALOG_GRPC_PORT + 20, catalog replica 3) on 127.0.0.1 is not free; stop what uses it or move the service by setting CATALOG_GRPC_PORT (0 = any free port)",
    );
  });
});

describe("stack.env and the test ports", () => {
  it("reads back what it writes, a value holding '=' included", () => {
    const env = { DATABASE_URL: "postgres://u@h/db?options=-c%20a=b", NOTIFY_ADDR: "127.0.0.1:1,127.0.0.1:2" };
    expect(formatStackEnv(env)).toBe(
      "DATABASE_URL=postgres://u@h/db?options=-c%20a=b\nNOTIFY_ADDR=127.0.0.1:1,127.0.0.1:2\n",
    );
    expect(parseStackEnv(formatStackEnv(env))).toEqual(env);
  });

  it("leaves every port of the stack to the system", () => {
    expect(Object.keys(ANY_PORTS).sort()).toEqual(STACK_PORTS.map((port) => port.variable).sort());
    expect(new Set(Object.values(ANY_PORTS))).toEqual(new Set(["0"]));
  });
});
