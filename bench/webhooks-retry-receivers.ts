/**
 * The receivers of `npm run bench:retries`, in their own process (as bench/webhooks-receivers.ts
 * is for bench:webhooks): RECEIVERS HTTPS servers on 127.0.0.1 (certificate from RECEIVER_KEY /
 * RECEIVER_CERT) that answer 503 to the first request of each delivery (keyed on the
 * `Service-Delivery-Id` header, across all servers) and 200 to every later one; with
 * FAIL_FIRST_PREFIX set, only deliveries of events whose `Service-Event-Id` starts with it fail
 * their first request (the others, competing load, get 200 at once). Each request is
 * noted with its delivery id, the number of the request for that delivery (1, 2, ...), the status
 * answered and the wall-clock time it was fully received, `Date.now()` (the clock the service
 * computes its due times with). The parent collects the notes over IPC: `{ type: "drain" }`
 * answers `{ type: "receipts", receipts: [deliveryId, number, status, at][] }`.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";

export type RetryReceipt = [deliveryId: string, number: number, status: number, at: number];

const count = Number(process.env.RECEIVERS ?? 4);
const key = readFileSync(process.env.RECEIVER_KEY!);
const cert = readFileSync(process.env.RECEIVER_CERT!);
const failPrefix = process.env.FAIL_FIRST_PREFIX ?? "";
const seen = new Map<string, number>();
let receipts: RetryReceipt[] = [];

const ports: number[] = [];
for (let i = 0; i < count; i++) {
  const server = createServer({ key, cert, keepAliveTimeout: 60_000 }, (req, res) => {
    const header = req.headers["service-delivery-id"];
    const id = typeof header === "string" ? header : "";
    const eventId = req.headers["service-event-id"];
    const failFirst = typeof eventId === "string" && eventId.startsWith(failPrefix);
    req.on("data", () => undefined);
    req.on("end", () => {
      const at = Date.now();
      const number = (seen.get(id) ?? 0) + 1;
      seen.set(id, number);
      const status = number === 1 && failFirst ? 503 : 200;
      receipts.push([id, number, status, at]);
      res.writeHead(status, { "content-type": "text/plain", "content-length": "2" });
      res.end(status === 200 ? "ok" : "no");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  ports.push((server.address() as AddressInfo).port);
}

process.on("message", (message: { type: string }) => {
  if (message.type === "drain") {
    process.send!({ type: "receipts", receipts });
    receipts = [];
  }
});
process.on("disconnect", () => process.exit(0));
process.send!({ type: "listening", ports });
