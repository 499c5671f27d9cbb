/**
 * `npm run -s receiver -- <command>`: a webhook receiver on your machine, for trying deliveries
 * with `npm start` (README, "Receive webhooks locally").
 *
 *   cert   [--dir D]                      a local CA and a certificate for 127.0.0.1 and localhost
 *                                         under D (default .data/receiver), valid 30 days; prints
 *                                         {"ca": "<D>/ca.pem"}: start the stack with
 *                                         NODE_EXTRA_CA_CERTS=<that path>
 *   listen --secret whsec_... [--secret ...] [--port 8443] [--dir D]
 *                                         an HTTPS server on 127.0.0.1 with that certificate;
 *                                         prints {"url": ...} once listening, then one JSON line
 *                                         per delivery (POST): the verified envelope, or why it was
 *                                         refused; any other request is answered 200 "listening",
 *                                         unprinted, so a script can wait for it to listen
 *
 * The `receiver` script runs `exec node`, as `start` does: npm passes the SIGTERM of a
 * `kill $!` (after `npm run -s receiver -- listen ... &`) to its script's shell, which is then this
 * process, so the receiver stops and frees its port instead of outliving npm.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { verifyWebhook, WebhookVerificationError } from "@platform/webhook-verifier";
import { createTestCertificates, startReceiver } from "./https-receiver.js";

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      dir: { type: "string", default: join(".data", "receiver") },
      secret: { type: "string", multiple: true },
      port: { type: "string", default: "8443" },
    },
    strict: true,
  });
  if (command === "cert") {
    const certificates = await createTestCertificates({ dir: values.dir, days: 30 });
    print({ ca: certificates.caPath });
    return;
  }
  if (command === "listen") {
    const secrets = values.secret ?? [];
    if (secrets.length === 0) throw new Error("listen needs --secret whsec_... (the endpoint's signing secret)");
    const [key, cert] = await Promise.all([
      readFile(join(values.dir, "server.key")),
      readFile(join(values.dir, "server.pem")),
    ]).catch(() => {
      throw new Error(`no certificate in ${values.dir}: run \`npm run -s receiver -- cert\` first`);
    });
    const receiver = await startReceiver(
      { key, cert },
      (request) => {
        // Deliveries are POSTs; anything else is someone checking that it listens (the README's
        // `until curl ...` loop): answered, not printed.
        if (request.method !== "POST") return { status: 200, body: "listening\n" };
        try {
          const event = verifyWebhook({ payload: request.body, header: request.headers["service-signature"], secrets });
          print({ verified: true, ...event });
          return { status: 204 };
        } catch (error) {
          if (!(error instanceof WebhookVerificationError)) throw error;
          print({ verified: false, reason: error.code });
          return { status: 400, body: error.code };
        }
      },
      Number(values.port),
    );
    print({ url: receiver.url });
    const stop = () => void receiver.close().then(() => process.exit(0));
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    return;
  }
  throw new Error("usage: receiver cert [--dir D] | receiver listen --secret whsec_... [--port 8443] [--dir D]");
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`${JSON.stringify({ error: error instanceof Error ? error.message : String(error) })}\n`);
  process.exitCode = 2;
});
