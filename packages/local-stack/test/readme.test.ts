/**
 * The README, run as a newcomer runs it: every ```sh block of README.md (read from the file, not
 * copied here), in order, with bash, in a fresh checkout (this one's files, an empty `.data/`),
 * against the stack its `npm start` blocks start. See readme-blocks.ts for the markers that say
 * what is run. The two terminals of the README are two: `npm start` blocks run in the background
 * until the gateway is ready (and are stopped with Ctrl-C, a SIGINT to their process group,
 * before the next one), the others one after the other in one shell session whose variables
 * carry over. The test only sets what the README says a reader may set: `GATEWAY` (the URL
 * `npm start` printed: every port is any free one here) and `RECEIVER_PORT`; and, as for every
 * stack of the tests, its own database, data directory and NATS namespace.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, symlink } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../src/embedded-postgres.js";
import { eventually } from "../src/https-receiver.js";
import { deleteNamespaceStreams, newNatsNamespace } from "../src/nats-namespace.js";
import { createScratchDatabase, type ScratchDatabase } from "../src/postgres-databases.js";
import { anyPorts, repo } from "./launcher.js";
import {
  assignedVariables,
  documentedOutputs,
  outputShape,
  readmeBlocks,
  unmatchedOutputs,
  UnmarkedBlockError,
} from "./readme-blocks.js";

const readme = await readFile(join(repo, "README.md"), "utf8");

describe("README.md's command blocks", () => {
  it("are each run by this test or skipped with a reason, and the run ones include the whole webhook loop", () => {
    const blocks = readmeBlocks(readme);
    for (const block of blocks) {
      if (block.kind === "skip") expect(block.reason.length).toBeGreaterThan(10);
      if (block.kind === "stack" && block.without) expect(block.code).toContain(block.without.text);
    }
    const run = blocks.filter((b) => b.kind === "run").map((b) => b.code);
    const stacks = blocks.filter((b) => b.kind === "stack").map((b) => b.code);
    expect(stacks).toHaveLength(2);
    expect(stacks[1]).toContain("WEBHOOKS_ALLOW_PRIVATE_TARGETS=true");
    for (const step of ["receiver -- listen", "event emit", "/deliveries/$D", "/test", "kill $RECEIVER"]) {
      expect(run.some((code) => code.includes(step))).toBe(true);
    }
  });

  it("refuses a sh block without a marker, and reads documented outputs as shapes", () => {
    expect(() => readmeBlocks("text\n\n```sh\nls\n```\n")).toThrow(UnmarkedBlockError);
    expect(readmeBlocks("<!-- readme-test: skip: not a command, only a picture -->\n\n```sh\nls\n```\n")).toEqual([
      { kind: "skip", line: 3, code: "ls", reason: "not a command, only a picture" },
    ]);
    expect(
      documentedOutputs('cert    # {"ca":"x"}: a CA\ncurl -si x   # note the ETag\n# HTTP/1.1 200 OK, with an ETag'),
    ).toEqual(['{"ca":"x"}', "HTTP/1.1 200 OK"]);
    expect(outputShape('{"url":"https://127.0.0.1:8443/hooks"}').test('{"url":"https://127.0.0.1:40123/hooks"}')).toBe(
      true,
    );
    expect(outputShape('{"id":"evt_...","duplicate":false}').test('{"id":"evt_1","duplicate":true}')).toBe(false);
    expect(assignedVariables("G=${GATEWAY:-x} P=${RECEIVER_PORT:-8443}\nRECEIVER=$!\ncurl -d 'A=1'")).toEqual([
      "G",
      "P",
      "RECEIVER",
    ]);
  });
});

/** A stack block running in the background: its process group, its output lines. */
interface StackTerminal {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
}

function startStackTerminal(code: string, cwd: string, env: Record<string, string>): StackTerminal {
  const child = spawn("bash", ["-c", `set -eo pipefail\n${code}`], {
    cwd,
    env,
    detached: true, // its own process group, as a terminal's job is: Ctrl-C signals all of it
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => lines.push(line));
  createInterface({ input: child.stderr }).on("line", (line) => lines.push(line));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, lines, exited };
}

/** Ctrl-C in the stack's terminal. */
async function stopStackTerminal(stack: StackTerminal): Promise<number | null> {
  if (stack.child.exitCode === null && stack.child.signalCode === null) process.kill(-stack.child.pid!, "SIGINT");
  return stack.exited;
}

const portIsFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });

describe("README.md, run block by block on a fresh checkout", () => {
  const namespace = newNatsNamespace("readme");
  let scratch: ScratchDatabase;
  let checkout: string;
  let receiverPort: number;
  let stateFile: string;
  let sessionLog: string;
  const stacks: StackTerminal[] = [];

  beforeAll(async () => {
    scratch = await createScratchDatabase("readme");
    // A fresh clone, as far as the README can tell: this checkout's files, and no .data/ yet.
    checkout = await mkdtemp(join(tmpdir(), "readme-checkout-"));
    for (const entry of await readdir(repo)) {
      if (entry === ".data" || entry === ".git") continue;
      await symlink(join(repo, entry), join(checkout, entry));
    }
    receiverPort = await freePort();
    stateFile = join(checkout, ".readme-test-variables");
    sessionLog = join(checkout, ".readme-test-terminal.log");
  });

  afterAll(async () => {
    for (const stack of stacks) await stopStackTerminal(stack);
    // Should a block have failed before `kill $RECEIVER`, the receiver it started.
    const receiver = /RECEIVER="?(\d+)/.exec(await readFile(stateFile, "utf8").catch(() => ""))?.[1];
    if (receiver) {
      try {
        process.kill(Number(receiver), "SIGTERM");
      } catch {
        // gone already, as `kill $RECEIVER` leaves it
      }
    }
    await deleteNamespaceStreams(namespace).catch(() => undefined);
    await scratch?.drop();
    await rm(checkout, { recursive: true, force: true });
  });

  it("works as written: both stacks start, every block exits 0 and prints what it documents", async () => {
    const base = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? checkout, NATS_NAMESPACE: namespace };
    let gateway: string | undefined;
    const log = openSync(sessionLog, "a");
    try {
      for (const block of readmeBlocks(readme)) {
        const where = `README.md line ${block.line}`;
        if (block.kind === "skip") continue;
        if (block.kind === "stack") {
          const previous = stacks.at(-1);
          if (previous) {
            expect(await stopStackTerminal(previous), `${where}: the previous stack stops on Ctrl-C`).toBe(0);
            expect(previous.lines).toContain("[stack] stopping");
          }
          const code = block.without ? block.code.replace(block.without.text, "") : block.code;
          const stack = startStackTerminal(code, checkout, {
            ...base,
            ...anyPorts,
            LOG_LEVEL: "warn",
            DATABASE_URL: scratch.url,
            STACK_DATA_DIR: join(checkout, ".data"),
            RECEIVER_PORT: String(receiverPort),
          });
          stacks.push(stack);
          const ready = await eventually(
            `${where}: the stack to print "Gateway ready at"`,
            () => {
              if (stack.child.exitCode !== null)
                throw new Error(`exited ${stack.child.exitCode}:\n${stack.lines.join("\n")}`);
              return stack.lines.map((l) => /^\[stack\] Gateway ready at (\S+)$/.exec(l)?.[1]).find(Boolean);
            },
            90_000,
          ).catch((error: Error) => {
            throw new Error(`${error.message}\n${stack.lines.join("\n")}`);
          });
          gateway = ready;
          expect(unmatchedOutputs(block.outputs, stack.lines), `${where}: documented outputs`).toEqual([]);
          continue;
        }
        // "In another terminal": one shell session whose variables carry over from block to block.
        const offset = (await readFile(sessionLog)).length;
        const carry = assignedVariables(block.code)
          .map((name) => `declare -p ${name} 2>/dev/null || true`)
          .join("; ");
        const script = [
          "set -eo pipefail",
          `if [ -f "$README_TEST_VARIABLES" ]; then . "$README_TEST_VARIABLES"; fi`,
          block.code,
          `{ ${carry || "true"}; } >> "$README_TEST_VARIABLES"`,
        ].join("\n");
        const shell = spawn("bash", ["-c", script], {
          cwd: checkout,
          env: {
            ...base,
            GATEWAY: gateway ?? "",
            RECEIVER_PORT: String(receiverPort),
            README_TEST_VARIABLES: stateFile,
          },
          stdio: ["ignore", log, log],
        });
        const status = await new Promise<number | null>((resolve) => shell.once("exit", resolve));
        const printed = async () => (await readFile(sessionLog)).subarray(offset).toString().split("\n");
        expect(status, `${where} exits 0; it printed:\n${(await printed()).join("\n")}`).toBe(0);
        // What a background process of the block prints (the receiver) may come a moment later.
        await eventually(
          `${where}: every documented output`,
          async () => (unmatchedOutputs(block.outputs, await printed()).length === 0 ? true : undefined),
          20_000,
        ).catch(async () => {
          expect(
            unmatchedOutputs(block.outputs, await printed()),
            `${where}; it printed:\n${(await printed()).join("\n")}`,
          ).toEqual([]);
        });
      }
    } finally {
      closeSync(log);
    }

    // The webhook stack's configuration line shows the settings took effect, readably.
    const webhooksConfiguration = stacks[1]!.lines
      .filter((line) => line.startsWith("{") && line.includes('"msg":"configuration"'))
      .map((line) => JSON.parse(line) as { service?: string; name?: string; config: Record<string, unknown> })
      .find((line) => "WEBHOOKS_ALLOWED_PORTS" in line.config);
    expect(webhooksConfiguration?.config).toMatchObject({
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: true,
      WEBHOOKS_ALLOWED_PORTS: `443,${receiverPort}`,
    });
    // `kill $RECEIVER` stopped the receiver itself, not only npm: its port is free again.
    await eventually("the receiver's port to be free after kill $RECEIVER", async () =>
      (await portIsFree(receiverPort)) ? true : undefined,
    );
    expect(await stopStackTerminal(stacks[1]!)).toBe(0);
  }, 300_000);
});
