import { execFile } from "node:child_process";
import { createHmac } from "node:crypto";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { curlCommand, shellQuote } from "./curl-command.js";

const run = promisify(execFile);

describe("copy as curl", () => {
  const delivery = {
    url: "https://hooks.example.com/in?x='1'",
    payload: `{"id":"evt_1","data":{"object":{"note":"it's $HOME \`id\` \\\\ \\"q\\""}}}`,
    eventId: "evt_1",
    deliveryId: "dlv_1",
  };

  it("quotes every word for a POSIX shell", () => {
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(shellQuote("$HOME")).toBe(`'$HOME'`);
  });

  it("holds no secret, and run by sh sends the exact payload signed with $WEBHOOK_SECRET", async () => {
    const script = curlCommand(delivery);
    expect(script).not.toMatch(/whsec_/);
    // curl replaced by a function that prints its arguments, one per line (NUL-separated).
    const { stdout } = await run("sh", ["-c", `curl() { for a in "$@"; do printf '%s\\0' "$a"; done; }\n${script}`], {
      env: { PATH: process.env.PATH ?? "", WEBHOOK_SECRET: "whsec_test_secret" },
    });
    const args = stdout.split("\0").slice(0, -1);
    expect(args.slice(0, 3)).toEqual(["-X", "POST", delivery.url]);
    expect(args.at(-1)).toBe(delivery.payload);
    const headers = args.filter((_, i) => args[i - 1] === "-H");
    expect(headers.slice(0, 4)).toEqual([
      "Content-Type: application/json",
      "User-Agent: platform-webhooks/1.0",
      "Service-Event-Id: evt_1",
      "Service-Delivery-Id: dlv_1",
    ]);
    const signature = /^Service-Signature: t=(\d+),v1=([0-9a-f]{64})$/.exec(headers[4]!);
    expect(signature).not.toBeNull();
    const expected = createHmac("sha256", "whsec_test_secret")
      .update(`${signature![1]}.${delivery.payload}`)
      .digest("hex");
    expect(signature![2]).toBe(expected);
  });
});
