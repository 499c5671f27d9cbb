/**
 * Resolves an endpoint URL's host to the address a delivery will connect to, refusing hosts that
 * resolve to an address deliveries may not reach (domain/target-address.ts). Used when an endpoint
 * is created or its URL changed, and again at every attempt, whose connection is pinned to the
 * address returned here, so a DNS answer that changes in between (rebinding) cannot redirect it.
 * Given the URL, it first checks the port against WEBHOOKS_ALLOWED_PORTS (443 always).
 * WEBHOOKS_ALLOW_PRIVATE_TARGETS=true lifts the address check only (local development and tests),
 * never the port rule.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { DomainError } from "@platform/service-kit/errors";
import {
  classifyAddress,
  defaultAllowedPorts,
  isAllowedPort,
  portOfUrl,
  type AddressClass,
  type AllowedPorts,
} from "../domain/target-address.js";

export interface ResolvedTarget {
  address: string;
  family: 4 | 6;
}

/** Every address of a name, as dns.lookup({ all: true }) answers (injectable for tests). */
export type LookupAll = (hostname: string) => Promise<{ address: string; family: number }[]>;

export type TargetRefusal = AddressClass | "unresolvable" | "port_not_allowed";

/** The URL's host is not a public address (or does not resolve), or its port is not allowed: a 400. */
export class TargetNotAllowedError extends DomainError {
  override name = "TargetNotAllowedError";
  constructor(
    readonly hostname: string,
    readonly refusal: TargetRefusal,
    readonly address?: string,
    detail?: string,
  ) {
    super(
      "invalid_argument",
      "webhook.target_not_allowed",
      detail ??
        (refusal === "unresolvable"
          ? `the url's host ${JSON.stringify(hostname)} does not resolve`
          : `the url's host ${JSON.stringify(hostname)} resolves to a ${refusal.replace("_", "-")} address${address !== undefined && address !== hostname.replace(/^\[(.*)\]$/, "$1") ? ` (${address})` : ""}; webhooks go to public addresses only`),
    );
  }
}

export interface TargetResolver {
  /**
   * The address to connect to; throws TargetNotAllowedError. Given a URL, its port is checked
   * first; given a bare host name, only the address.
   */
  resolve(target: URL | string): Promise<ResolvedTarget>;
}

const systemLookup: LookupAll = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export function createTargetResolver(options: {
  allowPrivate: boolean;
  /** WEBHOOKS_ALLOWED_PORTS; 443 only when not given. */
  allowedPorts?: AllowedPorts;
  lookup?: LookupAll;
  /** Called with every refusal (a metric); must not throw. */
  onRefusal?: (refusal: TargetRefusal) => void;
}): TargetResolver {
  const lookup = options.lookup ?? systemLookup;
  const allowedPorts = options.allowedPorts ?? defaultAllowedPorts;
  const resolve = async (target: URL | string): Promise<ResolvedTarget> => {
    const hostname = typeof target === "string" ? target : target.hostname;
    if (typeof target !== "string") {
      const port = portOfUrl(target);
      if (!isAllowedPort(allowedPorts, port)) {
        throw new TargetNotAllowedError(
          hostname,
          "port_not_allowed",
          undefined,
          `the url's port ${port} is not one webhooks may be sent to (${allowedPorts.text})`,
        );
      }
    }
    const bare = hostname.replace(/^\[(.*)\]$/, "$1");
    const literal = isIP(bare);
    let answers: { address: string; family: number }[];
    if (literal !== 0) answers = [{ address: bare, family: literal }];
    else {
      try {
        answers = await lookup(bare);
      } catch {
        answers = [];
      }
    }
    if (answers.length === 0) throw new TargetNotAllowedError(hostname, "unresolvable");
    if (!options.allowPrivate) {
      // Every address must be public: a name with one private answer could be steered to it.
      for (const answer of answers) {
        const refusal = classifyAddress(answer.address);
        if (refusal !== null) throw new TargetNotAllowedError(hostname, refusal, answer.address);
      }
    }
    const first = answers[0]!;
    return { address: first.address, family: first.family === 6 ? 6 : 4 };
  };
  return {
    async resolve(target) {
      try {
        return await resolve(target);
      } catch (error) {
        if (error instanceof TargetNotAllowedError) options.onRefusal?.(error.refusal);
        throw error;
      }
    },
  };
}
