/**
 * The HTTPS sender in a child process that trusts a test CA (NODE_EXTRA_CA_CERTS is read at
 * start-up): the connection goes to the pinned address even for a name that resolves nowhere,
 * while SNI and the certificate check use the URL's name.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestCertificates,
  startReceiver,
  type TestCertificates,
  type TestReceiver,
} from "@platform/local-stack/https-receiver";

const run = promisify(execFile);
const sender = pathToFileURL(join(import.meta.dirname, "..", "dist", "src", "delivery", "https-sender.js")).href;

/** Sends one POST from a fresh process and returns what the sender reported. */
async function sendFromChild(caPath: string, url: string) {
  const script = `
    const { createHttpsSender } = await import(${JSON.stringify(sender)});
    const sender = createHttpsSender({ socketsPerOrigin: 2 });
    const response = await sender.send({
      url: new URL(${JSON.stringify(url)}),
      target: { address: "127.0.0.1", family: 4 },
      body: Buffer.from('{"hello":"world"}'),
      headers: { "content-type": "application/json" },
      timeoutMs: 5000,
    });
    sender.close();
    console.log(JSON.stringify({ ...response, responseBody: response.responseBody.toString() }));
  `;
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
    env: { PATH: process.env.PATH ?? "", NODE_EXTRA_CA_CERTS: caPath },
  });
  return JSON.parse(stdout.trim()) as { result: { kind: string; status?: number }; responseBody: string };
}

describe("the HTTPS sender", () => {
  let certs: TestCertificates;
  let hooks: TestReceiver;
  beforeAll(async () => {
    certs = await createTestCertificates({ names: ["hooks.invalid"] });
    hooks = await startReceiver(certs, () => ({ status: 202, body: "taken" }));
  });
  afterAll(async () => {
    await hooks?.close();
    await certs?.remove();
  });

  it("connects to the pinned address and checks the certificate against the URL's name", async () => {
    const port = new URL(hooks.url).port;
    const answer = await sendFromChild(certs.caPath, `https://hooks.invalid:${port}/in?x=1`);
    expect(answer.result).toEqual({ kind: "response", status: 202 });
    expect(answer.responseBody).toBe("taken");
    const request = hooks.requests.at(-1)!;
    expect(request.headers.host).toBe(`hooks.invalid:${port}`);
    expect(request.url).toBe("/in?x=1");
    expect(request.body.toString()).toBe('{"hello":"world"}');
  });

  it("refuses a certificate that does not name the URL's host", async () => {
    const port = new URL(hooks.url).port;
    const before = hooks.requests.length;
    const answer = await sendFromChild(certs.caPath, `https://elsewhere.invalid:${port}/in`);
    expect(answer.result).toEqual({ kind: "tls_error" });
    expect(hooks.requests).toHaveLength(before);
  });
});
