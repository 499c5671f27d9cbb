/**
 * A tiny HTTP proxy on 127.0.0.1 in front of the gateway, for the SDK's real-stack test. Every
 * request is passed on unchanged unless a fault is armed for its method and path; each armed fault
 * acts once, on the next matching request:
 *
 * - `drop`: passes the request on, waits for the gateway's whole answer, then destroys the client's
 *   connection without a byte of it (the request was applied, the client cannot know);
 * - `answer`: answers itself (a 503 with Retry-After, say) without passing the request on;
 * - `replace`: passes the request on, waits for the answer, and sends the given one instead (a 504
 *   outcome unknown where the gateway in fact applied it).
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface CannedAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type Fault =
  { kind: "drop" } | { kind: "answer"; answer: CannedAnswer } | { kind: "replace"; answer: CannedAnswer };

export interface Passed {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  /** The gateway's status (undefined when the proxy answered itself). */
  upstreamStatus: number | undefined;
  fault: Fault["kind"] | undefined;
}

export interface FaultProxy {
  url: string;
  /** Every request the proxy received, in order. */
  requests: Passed[];
  /** Arms `fault` for the next request with this method whose path (without query) equals `path`. */
  arm(method: string, path: string, fault: Fault): void;
  close(): Promise<void>;
}

export async function startFaultProxy(upstream: string): Promise<FaultProxy> {
  const target = new URL(upstream);
  const armed: { method: string; path: string; fault: Fault }[] = [];
  const requests: Passed[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const path = (req.url ?? "/").split("?")[0]!;
      const index = armed.findIndex((a) => a.method === req.method && a.path === path);
      const fault = index >= 0 ? armed.splice(index, 1)[0]!.fault : undefined;
      const passed: Passed = {
        method: req.method ?? "",
        path,
        headers: req.headers,
        upstreamStatus: undefined,
        fault: fault?.kind,
      };
      requests.push(passed);
      if (fault?.kind === "answer") {
        res.writeHead(fault.answer.status, fault.answer.headers).end(fault.answer.body);
        return;
      }
      const headers = { ...req.headers, host: target.host };
      const forward = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
        (answer) => {
          const body: Buffer[] = [];
          answer.on("data", (chunk: Buffer) => body.push(chunk));
          answer.on("end", () => {
            passed.upstreamStatus = answer.statusCode;
            if (fault?.kind === "drop") {
              req.socket.destroy();
              return;
            }
            if (fault?.kind === "replace") {
              res.writeHead(fault.answer.status, fault.answer.headers).end(fault.answer.body);
              return;
            }
            res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(body));
          });
        },
      );
      forward.on("error", () => res.destroy());
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    arm(method, path, fault) {
      armed.push({ method, path, fault });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
