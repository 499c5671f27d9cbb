import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local HTTP server that answers template-message sends (POST /{phone-number-id}/messages) the
 * way the WhatsApp Business Cloud API does, for tests and benchmarks. It records every request it
 * received and answers as told: success, a documented error object, slowly, never, or by
 * resetting the connection.
 */
export type CloudApiBehaviour =
  | { kind: "success" }
  | { kind: "error"; status: number; code: number; subcode?: number; message?: string }
  | { kind: "slow"; ms: number }
  | { kind: "silent" }
  | { kind: "reset" }
  | { kind: "raw"; status: number; body: string };

export interface ReceivedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: unknown;
}

export interface CloudApiStub {
  /** Base URL to configure as WHATSAPP_API_BASE_URL. */
  url: string;
  requests: ReceivedRequest[];
  /** The behaviour for the next requests (default success). */
  respondWith(behaviour: CloudApiBehaviour): void;
  close(): Promise<void>;
}

function success(res: ServerResponse, to: string) {
  const id = `wamid.${randomBytes(24).toString("base64url")}`;
  res.writeHead(200, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      messaging_product: "whatsapp",
      contacts: [{ input: to, wa_id: to }],
      messages: [{ id, message_status: "accepted" }],
    }),
  );
}

export async function startCloudApiStub(): Promise<CloudApiStub> {
  let behaviour: CloudApiBehaviour = { kind: "success" };
  const requests: ReceivedRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // kept as text
      }
      requests.push({
        method: req.method ?? "",
        path: req.url ?? "",
        authorization: req.headers.authorization,
        contentType: req.headers["content-type"],
        body,
      });
      const sentTo = (body as { to?: unknown } | null)?.to;
      const to = typeof sentTo === "string" ? sentTo : "";
      const current = behaviour;
      switch (current.kind) {
        case "success":
          return success(res, to);
        case "slow":
          setTimeout(() => success(res, to), current.ms).unref();
          return;
        case "silent":
          return; // never answers; the connection stays open until the client gives up
        case "reset":
          req.socket.destroy();
          return;
        case "raw":
          res.writeHead(current.status, { "content-type": "text/html" });
          res.end(current.body);
          return;
        case "error":
          res.writeHead(current.status, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              error: {
                message: current.message ?? "(#" + String(current.code) + ") provider error text",
                type: "OAuthException",
                code: current.code,
                ...(current.subcode === undefined ? {} : { error_subcode: current.subcode }),
                error_data: { messaging_product: "whatsapp", details: "provider internal details" },
                fbtrace_id: randomBytes(8).toString("base64url"),
              },
            }),
          );
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v21.0`,
    requests,
    respondWith(next) {
      behaviour = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
