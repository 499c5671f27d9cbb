import { createHmac, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local HTTP server that answers template-message sends (POST /{phone-number-id}/messages) the
 * way the WhatsApp Business Cloud API does, for tests and benchmarks. It records every request it
 * received and answers as told: success, a documented error object, slowly, never, or by
 * resetting the connection. Like the real API's app webhook, it also POSTs signed status callbacks
 * (X-Hub-Signature-256) to a callback URL, for the messages it accepted or any other ids, in any
 * order, repeated, badly signed or oversized, as a test tells it to. Numbers made known with
 * setNumber check the bearer token of their own tenant (401 OAuthException code 190 otherwise)
 * and answer their phone-number resource (`GET /{phone-number-id}?fields=...`) with a status and
 * quality rating tests set.
 */
export type CloudApiBehaviour =
  /** `messageId`: the id to answer with (a test that posts its statuses before the send); default a new one. */
  | { kind: "success"; messageId?: string }
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

/** One entry of a `statuses` list, as the Cloud API's webhook reports a message's progress. */
export interface StatusCallback {
  /** The message id (wamid) the send was answered with. */
  id: string;
  status: "sent" | "delivered" | "read" | "failed";
  /** Unix seconds; default now. */
  timestamp?: number;
  recipientId?: string;
  /** failed: the error's code (e.g. 131026 undeliverable). */
  errorCode?: number;
}

/** A message the stub accepted: its id, recipient and the phone number id it was sent from. */
export interface AcceptedMessage {
  id: string;
  to: string;
  phoneNumberId: string;
}

/** Where and how the stub POSTs callbacks (the gateway's callback path and the app secret). */
export interface CallbackTarget {
  url: string;
  appSecret: string;
}

/** How a callback is signed: correctly, with the wrong secret, a garbled header, or not at all. */
export type CallbackSigning = "valid" | "wrong_secret" | "malformed" | "missing";

/** `sha256=` + hex HMAC-SHA256 of the raw body keyed with the app secret (X-Hub-Signature-256). */
export function hubSignature(appSecret: string, body: string | Buffer): string {
  return `sha256=${createHmac("sha256", appSecret).update(body).digest("hex")}`;
}

/** A webhook notification of statuses from one phone number, in the Cloud API's shape. */
export function statusNotification(
  phoneNumberId: string,
  statuses: StatusCallback[],
  wabaId = "102290129340398",
): Record<string, unknown> {
  return {
    object: "whatsapp_business_account",
    entry: [
      {
        id: wabaId,
        changes: [
          {
            field: "messages",
            value: {
              messaging_product: "whatsapp",
              metadata: { display_phone_number: "15550783881", phone_number_id: phoneNumberId },
              statuses: statuses.map((status) => ({
                id: status.id,
                status: status.status,
                timestamp: String(status.timestamp ?? Math.floor(Date.now() / 1000)),
                recipient_id: status.recipientId ?? "447700900123",
                ...(status.status === "failed"
                  ? {
                      errors: [
                        {
                          code: status.errorCode ?? 131026,
                          title: "Message undeliverable",
                          message: "Message undeliverable",
                          error_data: { details: "provider internal details" },
                        },
                      ],
                    }
                  : {}),
              })),
            },
          },
        ],
      },
    ],
  };
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
  /** Every message the stub accepted, in order (what status callbacks name). */
  accepted: AcceptedMessage[];
  /**
   * POSTs a callback body to `target` as the app webhook does, signed as `signing` says (default
   * valid); answers the status and text the gateway returned.
   */
  postCallback(
    target: CallbackTarget,
    body: Record<string, unknown> | string | Buffer,
    signing?: CallbackSigning,
  ): Promise<{ status: number; text: string }>;
  /** POSTs statuses of messages (the accepted ones or any ids) from `phoneNumberId`, validly signed. */
  postStatuses(
    target: CallbackTarget,
    phoneNumberId: string,
    statuses: StatusCallback[],
  ): Promise<{ status: number; text: string }>;
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

async function postCallback(
  target: CallbackTarget,
  body: Record<string, unknown> | string | Buffer,
  signing: CallbackSigning = "valid",
): Promise<{ status: number; text: string }> {
  const raw = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === "string" ? body : JSON.stringify(body));
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (signing === "valid") headers["x-hub-signature-256"] = hubSignature(target.appSecret, raw);
  if (signing === "wrong_secret") headers["x-hub-signature-256"] = hubSignature(`${target.appSecret}-not`, raw);
  if (signing === "malformed") headers["x-hub-signature-256"] = "sha1=abc";
  const response = await fetch(target.url, { method: "POST", headers, body: raw });
  return { status: response.status, text: await response.text() };
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

function success(
  res: ServerResponse,
  to: string,
  phoneNumberId: string,
  accepted: AcceptedMessage[],
  messageId?: string,
) {
  const id = messageId ?? `wamid.${randomBytes(24).toString("base64url")}`;
  accepted.push({ id, to, phoneNumberId });
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
  const accepted: AcceptedMessage[] = [];
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
      // POST /v21.0/{phone-number-id}/messages
      const phoneNumberId = /\/([^/]+)\/messages$/.exec(req.url ?? "")?.[1] ?? "";
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
          return success(res, to, phoneNumberId, accepted, current.messageId);
        case "slow":
          setTimeout(() => success(res, to, phoneNumberId, accepted), current.ms).unref();
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
    accepted,
    postCallback,
    postStatuses: (target, phoneNumberId, statuses) =>
      postCallback(target, statusNotification(phoneNumberId, statuses)),
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
