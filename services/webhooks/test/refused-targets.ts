/**
 * The SSRF guard's table, shared by the creation path (webhook-service.test.ts) and the attempt
 * path (target-guard.test.ts): one row per range deliveries may not reach, each with a real
 * address, the host name a DNS stub answers it for, and the refusal the resolver must name.
 */
import { isIP } from "node:net";
import type { LookupAll } from "../src/delivery/target-resolver.js";
import type { AddressClass } from "../src/domain/target-address.js";

export interface RefusedTarget {
  /** The range, as the issue names it. */
  range: string;
  address: string;
  refusal: AddressClass;
  /** A name under .ssrf.test that the stub resolves to `address`. */
  hostname: string;
}

const rows: [string, string, AddressClass][] = [
  ["loopback", "127.0.0.1", "loopback"],
  ["loopback", "127.45.1.9", "loopback"],
  ["loopback (IPv6)", "::1", "loopback"],
  ["private 10/8", "10.0.0.1", "private"],
  ["private 172.16/12", "172.16.0.1", "private"],
  ["private 172.16/12 (top)", "172.31.255.254", "private"],
  ["private 192.168/16", "192.168.1.20", "private"],
  ["private (IPv6 unique local)", "fd12:3456:789a::1", "private"],
  ["link-local", "169.254.10.20", "link_local"],
  ["link-local (IPv6)", "fe80::1", "link_local"],
  ["CGNAT", "100.64.0.1", "cgnat"],
  ["CGNAT (top)", "100.127.255.254", "cgnat"],
  ["multicast", "224.0.0.251", "multicast"],
  ["multicast (top)", "239.255.255.250", "multicast"],
  ["multicast (IPv6)", "ff02::fb", "multicast"],
  ["unspecified", "0.0.0.0", "unspecified"],
  ["unspecified (this network)", "0.1.2.3", "unspecified"],
  ["unspecified (IPv6)", "::", "unspecified"],
  ["IPv4-mapped loopback", "::ffff:127.0.0.1", "loopback"],
  ["IPv4-mapped private", "::ffff:10.1.2.3", "private"],
  ["IPv4-mapped metadata", "::ffff:169.254.169.254", "metadata"],
  ["IPv4-mapped CGNAT (hex)", "::ffff:6440:1", "cgnat"],
  ["IPv4-compatible loopback", "::127.0.0.1", "loopback"],
  ["IPv4-compatible private", "::192.168.0.1", "private"],
  ["IPv4-compatible public (deprecated form)", "::8.8.8.8", "reserved"],
  ["NAT64 loopback", "64:ff9b::7f00:1", "loopback"],
  ["6to4 metadata", "2002:a9fe:a9fe::1", "metadata"],
  ["cloud metadata (AWS, GCP, Azure)", "169.254.169.254", "metadata"],
  ["cloud metadata (AWS IPv6)", "fd00:ec2::254", "metadata"],
  ["cloud metadata (Oracle)", "192.0.0.192", "reserved"],
  ["reserved 240/4", "240.0.0.1", "reserved"],
  ["broadcast", "255.255.255.255", "reserved"],
  ["documentation", "192.0.2.10", "documentation"],
  ["benchmarking", "198.18.0.1", "benchmarking"],
];

export const refusedTargets: RefusedTarget[] = rows.map(([range, address, refusal], i) => ({
  range,
  address,
  refusal,
  hostname: `r${i}-${refusal.replace("_", "-")}.ssrf.test`,
}));

/** A public address the stub answers for every other name. */
export const publicAddress = "93.184.215.14";

/** The URL host for an address literal (IPv6 in brackets). */
export function literalHost(address: string): string {
  return isIP(address) === 6 ? `[${address}]` : address;
}

/**
 * A DNS stub: the table's names answer their address; `flips` (mutable) overrides any name;
 * `mixed.ssrf.test` answers a public and a loopback address; `nowhere.ssrf.test` does not resolve;
 * every other name answers `publicAddress`.
 */
export function stubLookup(flips: Map<string, string> = new Map()): LookupAll {
  const zone = new Map(refusedTargets.map((row) => [row.hostname, row.address]));
  return (hostname) => {
    const answer = (address: string) => ({ address, family: isIP(address) });
    const flipped = flips.get(hostname);
    if (flipped !== undefined) return Promise.resolve([answer(flipped)]);
    if (hostname === "nowhere.ssrf.test") {
      return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }));
    }
    if (hostname === "mixed.ssrf.test") return Promise.resolve([answer(publicAddress), answer("127.0.0.1")]);
    return Promise.resolve([answer(zone.get(hostname) ?? publicAddress)]);
  };
}
