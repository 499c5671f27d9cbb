import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { loadWebhooksConfig } from "./config.js";

const base = { SECRETS_KEY: randomBytes(32).toString("base64") };

describe("the webhooks configuration", () => {
  it("leases a delivery for 60 s by default", () => {
    const config = loadWebhooksConfig(base);
    expect(config.WEBHOOKS_LEASE).toBe(60_000);
    expect(config.WEBHOOKS_DELIVERY_TIMEOUT).toBe(10_000);
  });

  it("takes a shorter lease when it still exceeds the delivery timeout by 5 s", () => {
    const config = loadWebhooksConfig({ ...base, WEBHOOKS_DELIVERY_TIMEOUT: "2s", WEBHOOKS_LEASE: "7s" });
    expect(config.WEBHOOKS_LEASE).toBe(7_000);
  });

  it("refuses a lease an attempt could outlive", () => {
    expect(() => loadWebhooksConfig({ ...base, WEBHOOKS_LEASE: "14s" })).toThrow(
      /WEBHOOKS_LEASE: must exceed WEBHOOKS_DELIVERY_TIMEOUT by at least 5s/,
    );
    expect(() => loadWebhooksConfig({ ...base, WEBHOOKS_DELIVERY_TIMEOUT: "60s" })).toThrow(/WEBHOOKS_LEASE/);
  });
});
