import { describe, expect, it } from "vitest";
import { activate, InvalidTenantError, validateNewTenant, withChannel, type Tenant } from "./tenant.js";
import { InvalidUsageLimitsError, validateUsageLimits } from "./usage-limits.js";

const pending: Tenant = {
  id: "acme",
  name: "Acme",
  status: "pending_activation",
  activated: false,
  channelReady: false,
  version: 1,
  lastErrorCode: "account.tenant_unavailable",
  plan: "testing",
  createdAt: new Date(0),
  activationState: "provisioning",
  planReason: null,
  planChangedAt: null,
  month: "1970-01",
  monthSends: 0,
};

describe("tenants", () => {
  it("assign an id when none is given and default to the testing plan", () => {
    const tenant = validateNewTenant({ id: "", name: " Acme ", plan: undefined });
    expect(tenant).toEqual({
      id: expect.stringMatching(/^ten_[0-9a-f]{24}$/) as string,
      name: "Acme",
      plan: "testing",
    });
  });

  it.each([
    ["an id with spaces", { id: "a b", name: "x" }],
    ["a 65-character id", { id: "a".repeat(65), name: "x" }],
    ["an empty name", { id: "ok", name: "  " }],
    ["a 201-character name", { id: "ok", name: "n".repeat(201) }],
  ])("refuse %s", (_label, input) => {
    expect(() => validateNewTenant({ ...input, plan: undefined })).toThrow(InvalidTenantError);
  });

  it("activate into active with the channel ready and the last error cleared", () => {
    expect(activate(pending)).toMatchObject({
      status: "active",
      activated: true,
      channelReady: true,
      lastErrorCode: null,
    });
  });

  it("change channel readiness without touching activation", () => {
    const active = activate(pending);
    expect(withChannel(active, false)).toMatchObject({ activated: true, channelReady: false });
  });
});

describe("usage limits", () => {
  it("accept a soft cap up to the hard cap", () => {
    expect(validateUsageLimits(0, 0)).toEqual({ softCap: 0, hardCap: 0 });
    expect(validateUsageLimits(800, 1000)).toEqual({ softCap: 800, hardCap: 1000 });
  });

  it.each([
    [1001, 1000, /softCap must not be greater than hardCap/],
    [-1, 10, /softCap must be a whole number/],
    [1, 1.5, /hardCap must be a whole number/],
    [1, 2 ** 53, /hardCap must be a whole number/],
  ])("refuse soft %d / hard %d", (soft, hard, message) => {
    expect(() => validateUsageLimits(soft, hard)).toThrow(message);
    expect(() => validateUsageLimits(soft, hard)).toThrow(InvalidUsageLimitsError);
  });
});
