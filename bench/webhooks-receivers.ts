/**
 * The receivers of `npm run bench:webhooks`, in their own process (so neither the pipeline nor the
 * baseline loop shares its event loop): RECEIVERS HTTPS servers on 127.0.0.1 (certificate from
 * RECEIVER_KEY / RECEIVER_CERT) that answer 200 at once and note, per request, the
 * `Service-Event-Id` header and the wall-clock time of receipt (ms since the epoch, sub-ms). The
 * parent collects the notes over IPC: `{ type: "drain" }` answers `{ type: "receipts", ids, at }`.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";

const count = Number(process.env.RECEIVERS ?? 4);
const key = readFileSync(process.env.RECEIVER_KEY!);
const cert = readFileSync(process.env.RECEIVER_CERT!);
let ids: string[] = [];
let at: number[] = [];
const now = () => performance.timeOrigin + performance.now();

const ports: number[] = [];
for (let i = 0; i < count; i++) {
  const server = createServer({ key, cert, keepAliveTimeout: 60_000 }, (req, res) => {
    const id = req.headers["service-event-id"];
    req.on("data", () => undefined);
    req.on("end", () => {
      ids.push(typeof id === "string" ? id : "");
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
    process.send!({ type: "receipts", ids, at });
    ids = [];
    at = [];
  }
});
process.on("disconnect", () => process.exit(0));
process.send!({ type: "listening", ports });
