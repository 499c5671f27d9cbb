/**
 * Which IP addresses a webhook may be sent to (DESIGN §2, spec 2.5 "public HTTPS URL"): never
 * loopback, private, link-local, CGNAT, multicast, unspecified, reserved or documentation ranges,
 * cloud metadata addresses, nor IPv6 forms that embed such an IPv4 address (IPv4-mapped,
 * IPv4-compatible, NAT64, 6to4). Pure: classification only; resolving names is the resolver's job.
 */
import { BlockList, isIP } from "node:net";

export type AddressClass =
  | "unspecified"
  | "loopback"
  | "private"
  | "link_local"
  | "cgnat"
  | "multicast"
  | "metadata"
  | "reserved"
  | "documentation"
  | "benchmarking"
  | "invalid";

const v4: [AddressClass, string, number][] = [
  ["unspecified", "0.0.0.0", 8], // "this network"
  ["loopback", "127.0.0.0", 8],
  ["private", "10.0.0.0", 8],
  ["private", "172.16.0.0", 12],
  ["private", "192.168.0.0", 16],
  ["cgnat", "100.64.0.0", 10],
  ["metadata", "169.254.169.254", 32], // before link-local: the more specific name wins
  ["link_local", "169.254.0.0", 16],
  ["reserved", "192.0.0.0", 24], // IETF protocol assignments (incl. 192.0.0.192 Oracle metadata)
  ["documentation", "192.0.2.0", 24],
  ["reserved", "192.88.99.0", 24], // 6to4 relay anycast
  ["benchmarking", "198.18.0.0", 15],
  ["documentation", "198.51.100.0", 24],
  ["documentation", "203.0.113.0", 24],
  ["multicast", "224.0.0.0", 4],
  ["reserved", "240.0.0.0", 4], // includes 255.255.255.255
];

const v6: [AddressClass, string, number][] = [
  ["metadata", "fd00:ec2::254", 128], // AWS IMDS over IPv6
  ["unspecified", "::", 128],
  ["loopback", "::1", 128],
  ["private", "fc00::", 7], // unique local
  ["link_local", "fe80::", 10],
  ["reserved", "fec0::", 10], // deprecated site-local
  ["multicast", "ff00::", 8],
  ["documentation", "2001:db8::", 32],
  ["reserved", "100::", 64], // discard-only
  ["reserved", "2001::", 23], // IETF protocol assignments (Teredo, ORCHID, ...)
];

function blockListOf(entries: [AddressClass, string, number][], family: "ipv4" | "ipv6") {
  return entries.map(([name, network, prefix]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, family);
    return [name, list] as const;
  });
}

const v4Lists = blockListOf(v4, "ipv4");
const v6Lists = blockListOf(v6, "ipv6");

/** The IPv4 address an IPv6 address embeds, for the forms that route to that IPv4 address. */
function embeddedIpv4(address: string): string | undefined {
  const groups = expandIpv6(address);
  if (!groups) return undefined;
  const asV4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zero = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  // ::ffff:a.b.c.d (IPv4-mapped) and ::a.b.c.d (IPv4-compatible, deprecated; not :: or ::1).
  if (zero(0, 5) && groups[5] === 0xffff) return asV4(groups[6]!, groups[7]!);
  if (zero(0, 6) && (groups[6] !== 0 || groups[7]! > 1)) return asV4(groups[6]!, groups[7]!);
  // ::ffff:0:a.b.c.d (SIIT), 64:ff9b::a.b.c.d (NAT64 well-known prefix).
  if (zero(0, 4) && groups[4] === 0xffff && groups[5] === 0) return asV4(groups[6]!, groups[7]!);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zero(2, 6)) return asV4(groups[6]!, groups[7]!);
  // 2002:aabb:ccdd::/48 (6to4) routes to aa.bb.cc.dd.
  if (groups[0] === 0x2002) return asV4(groups[1]!, groups[2]!);
  return undefined;
}

/** Eight 16-bit groups of an IPv6 address (dotted IPv4 tail and zone id handled); undefined if malformed. */
export function expandIpv6(address: string): number[] | undefined {
  let text = address.replace(/%.*$/, "").toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    if (isIP(dotted[1]!) !== 4) return undefined;
    const [a, b, c, d] = dotted[1]!.split(".").map(Number) as [number, number, number, number];
    text = `${text.slice(0, -dotted[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const fill = 8 - head.length - tail.length;
  if (halves.length === 1 ? head.length !== 8 : fill < 1) return undefined;
  const groups = [...head, ...Array<number>(halves.length === 2 ? fill : 0).fill(0), ...tail];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

/**
 * The class of a non-public address, or null when the address is public (deliveries may go
 * there). Anything that is not an IP address at all is "invalid".
 */
export function classifyAddress(address: string): AddressClass | null {
  const bare = address.replace(/^\[(.*)\]$/, "$1");
  const family = isIP(bare.replace(/%.*$/, ""));
  if (family === 4) {
    for (const [name, list] of v4Lists) if (list.check(bare, "ipv4")) return name;
    return null;
  }
  if (family === 6) {
    const inner = embeddedIpv4(bare);
    if (inner !== undefined) {
      const innerClass = classifyAddress(inner);
      // ::ffff:8.8.8.8 reaches 8.8.8.8: public. The deprecated compatible form is refused outright.
      const groups = expandIpv6(bare)!;
      const compatible = groups.slice(0, 6).every((g) => g === 0);
      return innerClass ?? (compatible ? "reserved" : null);
    }
    const plain = bare.replace(/%.*$/, "");
    for (const [name, list] of v6Lists) if (list.check(plain, "ipv6")) return name;
    return null;
  }
  return "invalid";
}

/** Whether deliveries may be sent to this address. */
export function isPublicAddress(address: string): boolean {
  return classifyAddress(address) === null;
}

/**
 * The ports endpoint URLs may name (WEBHOOKS_ALLOWED_PORTS): 443 always; others only when
 * listed. WEBHOOKS_ALLOW_PRIVATE_TARGETS does not lift this rule.
 */
export interface AllowedPorts {
  /** Inclusive ranges; 443 is always among them. */
  readonly ranges: readonly (readonly [number, number])[];
  /** The list as configured, for messages: "443" or "443,8443,1024-65535". */
  readonly text: string;
}

export const defaultAllowedPorts: AllowedPorts = { ranges: [[443, 443]], text: "443" };

/**
 * Parses `443,8443,1024-65535` (ports and inclusive ranges, 1-65535); 443 is always added, and a
 * port or range listed twice counts once (in `ranges` and in `text`).
 */
export function parseAllowedPorts(text: string): AllowedPorts {
  const ranges: [number, number][] = [[443, 443]];
  const listed = ["443"];
  const port = (part: string) => {
    if (!/^\d{1,5}$/.test(part)) throw new Error(`${JSON.stringify(part)} is not a port`);
    const value = Number(part);
    if (value < 1 || value > 65535) throw new Error(`${value} is not a port (1-65535)`);
    return value;
  };
  for (const raw of text.split(",")) {
    const part = raw.trim();
    if (part === "") continue;
    const [from, to, ...rest] = part.split("-");
    if (rest.length > 0) throw new Error(`${JSON.stringify(part)} is not a port or a range`);
    const low = port(from!.trim());
    const high = to === undefined ? low : port(to.trim());
    if (high < low) throw new Error(`${JSON.stringify(part)} is an empty range`);
    if (ranges.some(([l, h]) => l === low && h === high)) continue; // "443" or a repeat
    ranges.push([low, high]);
    listed.push(low === high ? String(low) : `${low}-${high}`);
  }
  return { ranges, text: listed.join(",") };
}

/** The port a URL connects to (its explicit port, else 443 for https). */
export function portOfUrl(url: URL): number {
  return url.port === "" ? (url.protocol === "http:" ? 80 : 443) : Number(url.port);
}

export function isAllowedPort(allowed: AllowedPorts, port: number): boolean {
  return allowed.ranges.some(([low, high]) => port >= low && port <= high);
}
