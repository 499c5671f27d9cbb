import { describe, expect, it } from "vitest";
import { createTargetResolver, TargetNotAllowedError, type LookupAll } from "./target-resolver.js";

/** A DNS stub: names and their answers. */
const zone: Record<string, string[]> = {
  "hooks.example.com": ["93.184.216.34"],
  "v6.example.com": ["2606:4700::6810:84e5"],
  "internal.example.com": ["10.0.0.5"],
  "mixed.example.com": ["93.184.216.34", "127.0.0.1"],
  "metadata.example.com": ["169.254.169.254"],
  "mapped.example.com": ["::ffff:192.168.0.1"],
};
const lookup: LookupAll = (hostname) => {
  const answers = zone[hostname];
  if (!answers) {
    return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }));
  }
  return Promise.resolve(answers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })));
};

describe("resolving an endpoint's host", () => {
  const strict = createTargetResolver({ allowPrivate: false, lookup });
  const lenient = createTargetResolver({ allowPrivate: true, lookup });

  it("answers the address to pin the connection to", async () => {
    await expect(strict.resolve("hooks.example.com")).resolves.toEqual({ address: "93.184.216.34", family: 4 });
    await expect(strict.resolve("v6.example.com")).resolves.toEqual({ address: "2606:4700::6810:84e5", family: 6 });
    await expect(strict.resolve("8.8.8.8")).resolves.toEqual({ address: "8.8.8.8", family: 4 });
  });

  it.each([
    ["internal.example.com", "private"],
    ["mixed.example.com", "loopback"],
    ["metadata.example.com", "metadata"],
    ["mapped.example.com", "private"],
    ["127.0.0.1", "loopback"],
    ["[::1]", "loopback"],
    ["nowhere.example.com", "unresolvable"],
  ])("refuses %s (%s) with webhook.target_not_allowed", async (host, refusal) => {
    const error = await strict.resolve(host).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TargetNotAllowedError);
    expect(error).toMatchObject({ code: "webhook.target_not_allowed", kind: "invalid_argument", refusal });
  });

  it("lets private addresses through only when WEBHOOKS_ALLOW_PRIVATE_TARGETS is set, never an unresolvable name", async () => {
    await expect(lenient.resolve("internal.example.com")).resolves.toEqual({ address: "10.0.0.5", family: 4 });
    await expect(lenient.resolve("127.0.0.1")).resolves.toEqual({ address: "127.0.0.1", family: 4 });
    await expect(lenient.resolve("nowhere.example.com")).rejects.toBeInstanceOf(TargetNotAllowedError);
  });
});
