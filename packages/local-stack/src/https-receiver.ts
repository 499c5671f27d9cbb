/**
 * Test receivers for webhook deliveries: a CA and a server certificate (subjectAltName
 * IP:127.0.0.1 and DNS:localhost) made with openssl in a temp dir, and node:https servers on
 * 127.0.0.1, port 0, that record every request with its raw body and answer as told.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import type { IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface TestCertificates {
  dir: string;
  /** The CA certificate's path: what NODE_EXTRA_CA_CERTS points at. */
  caPath: string;
  key: Buffer;
  cert: Buffer;
  remove(): Promise<void>;
}

/**
 * A CA and a server certificate it signed, for 127.0.0.1, localhost and `names`: throwaway (in a
 * temp dir, valid 2 days) unless `dir` is given (then kept there, valid `days`).
 */
export async function createTestCertificates(
  options: { names?: string[]; dir?: string; days?: number } = {},
): Promise<TestCertificates> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), "webhooks-tls-")));
  await mkdir(dir, { recursive: true });
  const days = String(options.days ?? 2);
  const at = (name: string) => join(dir, name);
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  await run("openssl", [
    "req",
    "-x509",
    ...ec,
    "-keyout",
    at("ca.key"),
    "-out",
    at("ca.pem"),
    "-days",
    days,
    "-subj",
    "/CN=webhooks test CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  await run("openssl", ["req", ...ec, "-keyout", at("server.key"), "-out", at("server.csr"), "-subj", "/CN=localhost"]);
  await writeFile(
    at("server.ext"),
    [
      `subjectAltName=${["IP:127.0.0.1", "DNS:localhost", ...(options.names ?? []).map((n) => `DNS:${n}`)].join(",")}`,
      "basicConstraints=CA:FALSE",
      "keyUsage=critical,digitalSignature",
      "extendedKeyUsage=serverAuth",
      "",
    ].join("\n"),
  );
  await run("openssl", [
    "x509",
    "-req",
    "-in",
    at("server.csr"),
    "-CA",
    at("ca.pem"),
    "-CAkey",
    at("ca.key"),
    "-CAcreateserial",
    "-out",
    at("server.pem"),
    "-days",
    days,
    "-extfile",
    at("server.ext"),
  ]);
  return {
    dir,
    caPath: at("ca.pem"),
    key: await readFile(at("server.key")),
    cert: await readFile(at("server.pem")),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The raw request bytes, as a verifier must see them. */
  body: Buffer;
  receivedAt: number;
}

export interface Answer {
  status: number;
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer: the request hangs until the client gives up or the receiver closes. */
  hang?: boolean;
}

export interface TestReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** Changes how later requests are answered. */
  answer(respond: (request: ReceivedRequest, index: number) => Answer): void;
  close(): Promise<void>;
}

export async function startReceiver(
  tls: { key: Buffer; cert: Buffer },
  respond: (request: ReceivedRequest, index: number) => Answer = () => ({ status: 200, body: "ok" }),
  port = 0,
): Promise<TestReceiver> {
  const requests: ReceivedRequest[] = [];
  let responder = respond;
  const server: Server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request: ReceivedRequest = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks),
        receivedAt: Date.now(),
      };
      requests.push(request);
      const answer = responder(request, requests.length - 1);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(answer.status, answer.headers ?? { "content-type": "text/plain" });
        res.end(answer.body ?? "");
      };
      if (answer.hang) return;
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    requests,
    answer(next) {
      responder = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls `probe` until it returns something other than undefined or false; fails after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
