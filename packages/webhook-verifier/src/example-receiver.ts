/**
 * The example receiver of docs/webhooks.md, kept here so a test proves it works: a node:http
 * server that reads the raw body, verifies it, answers 2xx quickly and 400 on a bad signature.
 */
import { createServer, type Server } from "node:http";
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from "./verify-webhook.js";

export function createReceiver(secrets: string[], onEvent: (event: WebhookEvent) => void): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      try {
        const event = verifyWebhook({
          payload: Buffer.concat(chunks), // the raw bytes: never re-serialize parsed JSON
          header: req.headers["service-signature"],
          secrets,
        });
        onEvent(event); // deduplicate on event.id; hand slow work to a queue
        res.writeHead(204).end();
      } catch (error) {
        if (error instanceof WebhookVerificationError) {
          res.writeHead(400, { "content-type": "text/plain" }).end(error.code);
        } else {
          res.writeHead(500).end();
        }
      }
    });
  });
}
