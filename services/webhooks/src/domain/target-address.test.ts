import { describe, expect, it } from "vitest";
import {
  classifyAddress,
  expandIpv6,
  isAllowedPort,
  isPublicAddress,
  parseAllowedPorts,
  portOfUrl,
  type AddressClass,
} from "./target-address.js";

/** Every range deliveries may not reach, with real addresses at its edges and inside. */
const refused: [string, AddressClass][] = [
  ["0.0.0.0", "unspecified"],
  ["0.255.255.255", "unspecified"],
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["10.0.0.0", "private"],
  ["10.255.255.255", "private"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["192.168.0.1", "private"],
  ["192.168.255.255", "private"],
  ["100.64.0.1", "cgnat"],
  ["100.127.255.255", "cgnat"],
  ["169.254.0.1", "link_local"],
  ["169.254.255.255", "link_local"],
  ["169.254.169.254", "metadata"],
  ["192.0.0.192", "reserved"],
  ["192.0.2.10", "documentation"],
  ["198.51.100.7", "documentation"],
  ["203.0.113.9", "documentation"],
  ["198.18.0.1", "benchmarking"],
  ["198.19.255.255", "benchmarking"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["240.0.0.1", "reserved"],
  ["255.255.255.255", "reserved"],
  ["::", "unspecified"],
  ["::1", "loopback"],
  ["[::1]", "loopback"],
  ["fc00::1", "private"],
  ["fd12:3456:789a::1", "private"],
  ["fe80::1", "link_local"],
  ["fe80::1%eth0", "link_local"],
  ["febf:ffff::1", "link_local"],
  ["fec0::1", "reserved"],
  ["ff02::1", "multicast"],
  ["ff05::1:3", "multicast"],
  ["fd00:ec2::254", "metadata"],
  ["2001:db8::1", "documentation"],
  // IPv6 forms that embed an IPv4 address are judged by that address.
  ["::ffff:127.0.0.1", "loopback"],
  ["::ffff:7f00:1", "loopback"],
  ["::ffff:10.0.0.1", "private"],
  ["::ffff:169.254.169.254", "metadata"],
  ["::ffff:0:192.168.1.1", "private"],
  ["::127.0.0.1", "loopback"],
  ["::10.1.1.1", "private"],
  ["::8.8.8.8", "reserved"], // IPv4-compatible: deprecated, refused even for a public address
  ["64:ff9b::7f00:1", "loopback"], // NAT64
  ["64:ff9b::10.0.0.1", "private"],
  ["2002:7f00:1::", "loopback"], // 6to4
  ["2002:a9fe:a9fe::1", "metadata"],
  ["not-an-ip", "invalid"],
  ["1.2.3", "invalid"],
];

const allowed = [
  "1.1.1.1",
  "8.8.8.8",
  "9.255.255.255",
  "11.0.0.0",
  "100.63.255.255",
  "100.128.0.0",
  "172.15.255.255",
  "172.32.0.0",
  "169.253.255.255",
  "192.167.255.255",
  "192.169.0.0",
  "223.255.255.255",
  "::ffff:8.8.8.8",
  "64:ff9b::808:808",
  "2002:808:808::1",
  "2606:4700:4700::1111",
  "2a00:1450:4009:80b::200e",
];

describe("which addresses a delivery may reach", () => {
  it.each(refused)("refuses %s (%s)", (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(allowed)("allows the public address %s", (address) => {
    expect(classifyAddress(address)).toBeNull();
  });

  it("expands IPv6 text, with a dotted IPv4 tail and a zone", () => {
    expect(expandIpv6("::ffff:1.2.3.4")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(expandIpv6("fe80::1%lo")).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 1]);
    expect(expandIpv6("1::2::3")).toBeUndefined();
  });
});

describe("which ports an endpoint URL may name (WEBHOOKS_ALLOWED_PORTS)", () => {
  it("always allows 443, and what the list names (ports and ranges)", () => {
    const only = parseAllowedPorts("443");
    expect(only.text).toBe("443");
    expect([443, 8443, 80, 22].map((p) => isAllowedPort(only, p))).toEqual([true, false, false, false]);
    const listed = parseAllowedPorts(" 8443, 9000-9002 ,");
    expect(listed.text).toBe("443,8443,9000-9002");
    expect([443, 8443, 9000, 9002, 9003, 8999].map((p) => isAllowedPort(listed, p))).toEqual([
      true,
      true,
      true,
      true,
      false,
      false,
    ]);
    expect(isAllowedPort(parseAllowedPorts(""), 443)).toBe(true);
  });

  it("counts a port or range listed twice once, in its ranges and in its text", () => {
    expect(parseAllowedPorts("443")).toEqual({ ranges: [[443, 443]], text: "443" });
    expect(parseAllowedPorts("8443,443,8443, 9000-9002,9000-9002")).toEqual({
      ranges: [
        [443, 443],
        [8443, 8443],
        [9000, 9002],
      ],
      text: "443,8443,9000-9002",
    });
  });

  it.each(["0", "65536", "x", "10-5", "1-2-3", "-5", "443.0"])("refuses %j", (text) => {
    expect(() => parseAllowedPorts(text)).toThrow();
  });

  it("takes the URL's port, else 443", () => {
    expect(portOfUrl(new URL("https://h/x"))).toBe(443);
    expect(portOfUrl(new URL("https://h:443/x"))).toBe(443);
    expect(portOfUrl(new URL("https://h:8443/x"))).toBe(8443);
  });
});
