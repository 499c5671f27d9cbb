/**
 * One delivery attempt over the wire: an HTTPS POST whose connection is pinned to the address the
 * TargetResolver approved (the TLS name check still uses the URL's host name), with one total
 * deadline from connecting to the answer's last byte, no redirects followed, and at most the
 * first 4 KiB of the answer kept (the rest is not read). Keep-alive agents, one per endpoint
 * origin, are dropped after a few idle minutes.
 */
import { Agent, request } from "node:https";
import type { LookupFunction } from "node:net";
import { isIP } from "node:net";
import {
  classifyTransportError,
  storedResponseBodyBytes,
  truncateResponseBody,
  type AttemptResult,
} from "../domain/attempt-outcome.js";
import type { ResolvedTarget } from "./target-resolver.js";

export interface DeliveryRequest {
  url: URL;
  target: ResolvedTarget;
  body: Buffer;
  headers: Record<string, string>;
  timeoutMs: number;
}

export interface DeliveryResponse {
  result: AttemptResult;
  /** The first 4 KiB of the answer (empty when there was none). */
  responseBody: Buffer;
  truncated: boolean;
  durationMs: number;
}

export interface HttpsSender {
  send(request: DeliveryRequest): Promise<DeliveryResponse>;
  /** Closes every idle connection. */
  close(): void;
}

const agentIdleMs = 5 * 60_000;

class DeliveryTimeoutError extends Error {
  override name = "DeliveryTimeoutError";
  readonly code = "ETIMEDOUT";
  constructor(timeoutMs: number) {
    super(`no complete answer within ${timeoutMs} ms`);
  }
}

export function createHttpsSender(options: { socketsPerOrigin: number }): HttpsSender {
  const agents = new Map<string, { agent: Agent; lastUsed: number }>();
  let lastSweep = Date.now();

  function agentFor(origin: string): Agent {
    const now = Date.now();
    if (now - lastSweep > 60_000) {
      lastSweep = now;
      for (const [key, entry] of agents) {
        if (now - entry.lastUsed > agentIdleMs) {
          entry.agent.destroy();
          agents.delete(key);
        }
      }
    }
    let entry = agents.get(origin);
    if (!entry) {
      entry = {
        agent: new Agent({
          keepAlive: true,
          maxSockets: options.socketsPerOrigin,
          // Every socket kept when idle: closing some after each burst costs a TLS handshake each.
          maxFreeSockets: options.socketsPerOrigin,
          scheduling: "lifo",
        }),
        lastUsed: now,
      };
      agents.set(origin, entry);
    }
    entry.lastUsed = now;
    return entry.agent;
  }

  return {
    send(delivery) {
      const started = performance.now();
      const { url, target } = delivery;
      const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
      // Whatever name the socket asks for, it connects to the approved address.
      const pinned: LookupFunction = (_host, lookupOptions, callback) => {
        if ((lookupOptions as { all?: boolean }).all) {
          (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
            { address: target.address, family: target.family },
          ]);
        } else callback(null, target.address, target.family);
      };
      return new Promise<DeliveryResponse>((resolve) => {
        let settled = false;
        let timedOut = false;
        const finish = (result: AttemptResult, body: Buffer = Buffer.alloc(0), truncated = false) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve({ result, responseBody: body, truncated, durationMs: Math.round(performance.now() - started) });
        };
        const req = request({
          protocol: "https:",
          hostname,
          port: url.port === "" ? 443 : Number(url.port),
          path: `${url.pathname}${url.search}`,
          method: "POST",
          agent: agentFor(url.origin),
          lookup: pinned,
          // SNI and the certificate check use the URL's name (Node refuses an IP as SNI).
          ...(isIP(hostname) === 0 ? { servername: hostname } : {}),
          headers: { ...delivery.headers, host: url.host, "content-length": String(delivery.body.length) },
        });
        const timer = setTimeout(() => {
          timedOut = true;
          req.destroy(new DeliveryTimeoutError(delivery.timeoutMs));
        }, delivery.timeoutMs);
        req.on("error", (error) => finish(timedOut ? { kind: "timeout" } : classifyTransportError(error)));
        req.on("response", (res) => {
          const status = res.statusCode ?? 0;
          const retryAfter = res.headers["retry-after"];
          const answered: AttemptResult =
            retryAfter === undefined ? { kind: "response", status } : { kind: "response", status, retryAfter };
          const chunks: Buffer[] = [];
          let size = 0;
          const keep = () => {
            const { body, truncated } = truncateResponseBody(Buffer.concat(chunks), storedResponseBodyBytes);
            return { body, truncated };
          };
          res.on("data", (chunk: Buffer) => {
            chunks.push(chunk);
            size += chunk.length;
            if (size > storedResponseBodyBytes) {
              // Enough kept: the rest is not read (the connection is closed instead).
              const { body } = keep();
              finish(answered, body, true);
              res.destroy();
            }
          });
          res.on("end", () => {
            const { body, truncated } = keep();
            finish(answered, body, truncated);
          });
          res.on("error", (error) => finish(timedOut ? { kind: "timeout" } : classifyTransportError(error)));
          res.on("aborted", () => finish(timedOut ? { kind: "timeout" } : { kind: "connection_error" }));
        });
        req.end(delivery.body);
      });
    },
    close() {
      for (const entry of agents.values()) entry.agent.destroy();
      agents.clear();
    },
  };
}
