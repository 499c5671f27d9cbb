import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local HTTP server that answers template-message sends (POST /{phone-number-id}/messages) the
 * way the WhatsApp Business Cloud API does, for tests and benchmarks. It records every request it
 * received and answers as told: success, a documented error object, slowly, never, or by
 * resetting the connection. Numbers made known with setNumber check the bearer token of their own
 * tenant (401 OAuthException code 190 otherwise) and answer their phone-number resource
 * (`GET /{phone-number-id}?fields=...`) with a status and quality rating tests set.
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

/** A phone number the stand-in knows: its token and what its phone-number resource says. */
export interface StubNumber {
  /** The bearer token that may use this number; any other answers 401 (OAuthException, code 190). */
  token: string;
  displayPhoneNumber: string;
  verifiedName: string;
  /** GREEN, YELLOW, RED or UNKNOWN. */
  qualityRating: string;
  /** CONNECTED, FLAGGED, DISCONNECTED, BANNED, RESTRICTED, ... */
  status: string;
}

export interface CloudApiStub {
  /** Base URL to configure as WHATSAPP_API_BASE_URL. */
  url: string;
  requests: ReceivedRequest[];
  /** The behaviour for the next requests (default success). */
  respondWith(behaviour: CloudApiBehaviour): void;
  /**
   * Makes a phone number id known (or changes it): requests naming it must carry its token (else
   * 401 with the Cloud API's OAuthException error object, code 190), and `GET /{id}` answers its
   * phone-number resource. Numbers never registered are answered by the behaviour alone.
   */
  setNumber(phoneNumberId: string, number: Partial<StubNumber> & { token?: string }): void;
  close(): Promise<void>;
}

function oauthError(res: ServerResponse) {
  res.writeHead(401, {
    "content-type": "application/json",
    "www-authenticate": 'OAuth "Facebook Platform" "invalid_token"',
  });
  res.end(
    JSON.stringify({
      error: {
        message: "Invalid OAuth access token - Cannot parse access token",
        type: "OAuthException",
        code: 190,
        fbtrace_id: randomBytes(8).toString("base64url"),
      },
    }),
  );
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
  const numbers = new Map<string, StubNumber>();
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
      // /v21.0/{phone-number-id}[/messages][?fields=...]
      const [pathOnly = ""] = (req.url ?? "").split("?");
      const [, , numberId = "", resource = ""] = pathOnly.split("/");
      const number = numbers.get(decodeURIComponent(numberId));
      if (number) {
        if (req.headers.authorization !== `Bearer ${number.token}`) return oauthError(res);
        if (req.method === "GET" && resource === "") {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              id: numberId,
              display_phone_number: number.displayPhoneNumber,
              verified_name: number.verifiedName,
              quality_rating: number.qualityRating,
              status: number.status,
              name_status: "APPROVED",
              code_verification_status: "VERIFIED",
            }),
          );
          return;
        }
      }
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
    setNumber(phoneNumberId, patch) {
      const current = numbers.get(phoneNumberId) ?? {
        token: "",
        displayPhoneNumber: "+1 555-0100",
        verifiedName: "Test Business",
        qualityRating: "GREEN",
        status: "CONNECTED",
      };
      numbers.set(phoneNumberId, {
        ...current,
        ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)),
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
