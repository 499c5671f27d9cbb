import { describe, expect, it } from "vitest";
import { bindHost, configuredPorts, localAddress, serviceEnvironment, type StackValues } from "./stack-environment.js";

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
