import { describe, expect, it } from "vitest";
import { parseAllowedPorts } from "../domain/target-address.js";
import { createTargetResolver, TargetNotAllowedError, type LookupAll, type TargetRefusal } from "./target-resolver.js";

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

  it("checks a URL's port first: 443 and the listed ports; WEBHOOKS_ALLOW_PRIVATE_TARGETS does not lift it", async () => {
    const refusals: TargetRefusal[] = [];
    for (const allowPrivate of [false, true]) {
      const resolver = createTargetResolver({
        allowPrivate,
        allowedPorts: parseAllowedPorts("8443"),
        lookup,
        onRefusal: (refusal) => refusals.push(refusal),
      });
      await expect(resolver.resolve(new URL("https://hooks.example.com/x"))).resolves.toMatchObject({ family: 4 });
      await expect(resolver.resolve(new URL("https://hooks.example.com:8443/x"))).resolves.toMatchObject({ family: 4 });
      const error = await resolver.resolve(new URL("https://hooks.example.com:8080/x")).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "webhook.target_not_allowed", refusal: "port_not_allowed" });
      expect((error as Error).message).toBe("the url's port 8080 is not one webhooks may be sent to (443,8443)");
    }
    // Without a list only 443 is allowed; a refused port is refused before any lookup.
    const strictPorts = createTargetResolver({ allowPrivate: true, lookup: () => Promise.reject(new Error("no")) });
    await expect(strictPorts.resolve(new URL("https://x.example.com:8443/"))).rejects.toMatchObject({
      refusal: "port_not_allowed",
    });
    await expect(strict.resolve(new URL("https://internal.example.com/"))).rejects.toMatchObject({
      refusal: "private",
      address: "10.0.0.5",
      message: expect.stringContaining("private address (10.0.0.5)") as string,
    });
    expect(refusals).toEqual(["port_not_allowed", "port_not_allowed"]);
  });
});
