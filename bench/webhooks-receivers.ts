/**
 * The receivers of `npm run bench:webhooks`, in their own process (so neither the pipeline nor the
 * baseline loop shares its event loop): RECEIVERS HTTPS servers on 127.0.0.1 (certificate from
 * RECEIVER_KEY / RECEIVER_CERT) that answer 200 at once and note, per request, the
 * `Service-Event-Id` and `Service-Delivery-Id` headers and the wall-clock time of receipt (ms since
 * the epoch, sub-ms). The parent collects the notes over IPC: `{ type: "drain" }` answers
 * `{ type: "receipts", ids, deliveries, at, sample }`, `sample` the latest request (its receiver's
 * index, signature header and body) so the parent can check the signature.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";

const count = Number(process.env.RECEIVERS ?? 4);
const key = readFileSync(process.env.RECEIVER_KEY!);
const cert = readFileSync(process.env.RECEIVER_CERT!);
let ids: string[] = [];
let deliveries: string[] = [];
let at: number[] = [];
let sample: { receiver: number; signature: string; body: Buffer[] } | undefined;
const now = () => performance.timeOrigin + performance.now();

const ports: number[] = [];
for (let i = 0; i < count; i++) {
  const server = createServer({ key, cert, keepAliveTimeout: 60_000 }, (req, res) => {
    const id = req.headers["service-event-id"];
    const delivery = req.headers["service-delivery-id"];
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const signature = req.headers["service-signature"];
      sample = { receiver: i, signature: typeof signature === "string" ? signature : "", body: chunks };
      ids.push(typeof id === "string" ? id : "");
      deliveries.push(typeof delivery === "string" ? delivery : "");
      at.push(now());
      res.writeHead(200, { "content-type": "text/plain", "content-length": "2" });
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  ports.push((server.address() as AddressInfo).port);
}

process.on("message", (message: { type: string }) => {
  if (message.type === "drain") {
    const last = sample && { ...sample, body: Buffer.concat(sample.body).toString("utf8") };
    process.send!({ type: "receipts", ids, deliveries, at, sample: last });
    ids = [];
    deliveries = [];
    at = [];
    sample = undefined;
  }
});
process.on("disconnect", () => process.exit(0));
process.send!({ type: "listening", ports });
