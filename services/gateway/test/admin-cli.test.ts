import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { deleteNamespaceStreams, newNatsNamespace, testNatsUrl } from "@platform/local-stack/nats-namespace";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { startServiceProcess, type ServiceProcess } from "@platform/local-stack/service-process";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdmin } from "../src/cli/admin.js";

const run = promisify(execFile);
const admin = join(import.meta.dirname, "..", "dist", "src", "cli", "admin.js");
const notifyEntry = join(import.meta.dirname, "..", "..", "notify", "dist", "src", "main.js");

describe("admin CLI", () => {
  let scratch: ScratchDatabase;
  let notify: ServiceProcess;
  const notifyAddr = () => `127.0.0.1:${notify.listening.grpcPort as number}`;
  /** The built script, as `npm run admin` runs it: a process of its own (exit code, stdout, stderr). */
  const spawnCliWith = (env: Record<string, string>, ...args: string[]) =>
    run(process.execPath, [admin, ...args], { env: { PATH: process.env.PATH ?? "", ...env } }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );
  const spawnCli = (...args: string[]) =>
    spawnCliWith({ DATABASE_URL: scratch.url, NOTIFY_ADDR: notifyAddr() }, ...args);
  /**
   * The same run in-process (runAdmin, what the script calls), for the commands' own behaviour:
   * a process's cold start per command cost most of this file's time. The tests of the process
   * itself (exit codes, what it prints where) spawn the script.
   */
  const cliWith = async (env: Record<string, string>, ...args: string[]) => {
    let stdout = "";
    let stderr = "";
    const code = await runAdmin(
      args,
      { PATH: process.env.PATH ?? "", ...env },
      { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) },
    );
    return { code, stdout, stderr };
  };
  const cli = (...args: string[]) => cliWith({ DATABASE_URL: scratch.url, NOTIFY_ADDR: notifyAddr() }, ...args);
  const tenant = async (id: string) => {
    const created = await cli("tenant", "create", "--name", id, "--id", id);
    expect(created.code, created.stderr).toBe(0);
    return id;
  };

  const natsNamespace = newNatsNamespace();
  beforeAll(async () => {
    scratch = await createScratchDatabase("admin");
    notify = await startServiceProcess({
      name: "notify",
      entry: notifyEntry,
      env: {
        DATABASE_URL: scratch.url,
        GRPC_HOST: "127.0.0.1",
        GRPC_PORT: "0",
        METRICS_PORT: "0",
        NATS_URL: testNatsUrl(),
        NATS_NAMESPACE: natsNamespace,
        SECRETS_KEY: randomBytes(32).toString("base64"),
      },
    });
  });
  afterAll(async () => {
    await notify?.stop();
    await deleteNamespaceStreams(natsNamespace);
    await scratch?.drop();
  });

  it("creates a key with tenants and scopes, printing the key once as JSON", async () => {
    await tenant("t_1");
    await tenant("t_2");
    const { code, stdout, stderr } = await spawnCli(
      "key",
      "create",
      "--tenants",
      "t_1, t_2",
      "--scopes",
      "tenant:read,webhook:manage",
      "--name",
      "ops",
    );
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    const out = JSON.parse(stdout) as Record<string, unknown>;
    expect(out).toEqual({
      id: expect.stringMatching(/^key_[0-9a-f]{24}$/) as string,
      key: expect.stringMatching(/^sk_live_/) as string,
      name: "ops",
      scopes: ["tenant:read", "webhook:manage"],
      tenants: ["t_1", "t_2"],
    });
    const db = new pg.Client({ connectionString: scratch.url });
    await db.connect();
    const { rows } = await db.query<{ tenant_ids: string[]; digest: Buffer }>(
      "select tenant_ids, digest from gateway.api_keys where id = $1",
      [out.id],
    );
    await db.end();
    expect(rows[0]!.tenant_ids).toEqual(["t_1", "t_2"]);
    expect(rows[0]!.digest.toString("utf8")).not.toContain(out.key as string);
  });

  it("revokes a key", async () => {
    const created = JSON.parse((await cli("key", "create")).stdout) as { id: string };
    const revoked = await cli("key", "revoke", "--id", created.id);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ id: created.id, revoked: true });
  });

  it.each([
    [["key", "create", "--scopes", "pets:everything"], /unknown scope pets:everything/],
    [["key", "revoke", "--id", "key_nope"], /no key key_nope/],
    [["key", "revoke"], /needs --id/],
    [["key", "create", "--colour", "red"], /colour/],
    [["tenant", "delete"], /usage: admin/],
    [["projection", "rebuild", "--now"], /now/],
    [[], /usage: admin/],
  ])("refuses %j on stderr with exit 2", async (args, message) => {
    const { code, stdout, stderr } = await cli(...args);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect((JSON.parse(stderr) as { error: string }).error).toMatch(message);
  });

  it("refuses tenants that do not exist, naming each, and issues no key", async () => {
    await tenant("t_here");
    const { code, stdout, stderr } = await spawnCli(
      "key",
      "create",
      "--tenants",
      "t_here,t_gone,t_never",
      "--scopes",
      "tenant:read",
    );
    expect({ code, stdout }).toEqual({ code: 2, stdout: "" });
    expect(JSON.parse(stderr)).toEqual({ error: "no such tenant: t_gone, t_never" });
    const db = new pg.Client({ connectionString: scratch.url });
    await db.connect();
    const { rows } = await db.query<{ n: string }>(
      "select count(*) as n from gateway.api_keys where 't_here' = any(tenant_ids)",
    );
    await db.end();
    expect(rows[0]!.n).toBe("0");
  });

  it("warns on stderr when tenants come without scopes, and still issues the key", async () => {
    await tenant("t_noscope");
    const { code, stdout, stderr } = await spawnCli("key", "create", "--tenants", "t_noscope");
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ tenants: ["t_noscope"], scopes: [] });
    expect((JSON.parse(stderr) as { warning: string }).warning).toMatch(/no scopes/);
    const withScopes = await cli("key", "create", "--tenants", "t_noscope", "--scopes", "tenant:read");
    expect(withScopes.stderr).toBe("");
  });

  it.each([
    [["tenant", "activate", "--id", "ten_000000000000000000000000"]],
    [["tenant", "channel", "--id", "nope", "--state", "ready"]],
  ])("says no such tenant for %j", async (args) => {
    const { code, stderr } = await cli(...args);
    expect(code).toBe(2);
    expect(JSON.parse(stderr)).toEqual({ error: `no such tenant: ${args[3]!}` });
  });

  it.each([[["--help"]], [["-h"]], [["help"]]])("prints usage on stdout with exit 0 for %j", async (args) => {
    const { code, stdout, stderr } = await spawnCli(...args);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    for (const command of ["key create", "key revoke", "tenant create", "tenant activate", "tenant channel"]) {
      expect(stdout).toContain(command);
    }
  });

  it.each([
    [["key", "create", "--help"], /^usage: admin key create \[--tenants/],
    [["tenant", "channel", "-h"], /^usage: admin tenant channel --id ID --state ready\|not_ready/],
  ])("prints one command's usage for %j, touching nothing", async (args, usage) => {
    // No database or notify is needed to ask for help.
    const { code, stdout, stderr } = await cliWith(
      { DATABASE_URL: "postgres://postgres@127.0.0.1:1/none", NOTIFY_ADDR: "127.0.0.1:1" },
      ...args,
    );
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toMatch(usage);
  });

  it("says the stack seems down, where it looked and to run npm start, when Postgres is unreachable", async () => {
    const { code, stderr } = await spawnCliWith(
      { DATABASE_URL: "postgres://postgres:hunter2@127.0.0.1:1/none", NOTIFY_ADDR: notifyAddr() },
      "key",
      "create",
    );
    expect(code).toBe(1);
    const { error } = JSON.parse(stderr) as { error: string };
    expect(error).toMatch(/^the stack seems down: could not reach Postgres at 127\.0\.0\.1:1\/none .*run `npm start`$/);
    expect(error).not.toContain("hunter2");
  }, 30_000);

  it("says the stack seems down when notify is unreachable", async () => {
    const { code, stderr } = await cliWith(
      { DATABASE_URL: scratch.url, NOTIFY_ADDR: "127.0.0.1:1" },
      "tenant",
      "activate",
      "--id",
      "t_1",
    );
    expect(code).toBe(1);
    expect((JSON.parse(stderr) as { error: string }).error).toMatch(
      /^the stack seems down: could not reach notify at 127\.0\.0\.1:1 .*run `npm start`$/,
    );
    const key = await cliWith(
      { DATABASE_URL: scratch.url, NOTIFY_ADDR: "127.0.0.1:1" },
      "key",
      "create",
      "--tenants",
      "t_1",
    );
    expect((JSON.parse(key.stderr) as { error: string }).error).toMatch(/could not reach notify at 127\.0\.0\.1:1/);
  }, 30_000);

  it("refuses an event emit it cannot send, saying why, with exit 2 and nothing published", async () => {
    await tenant("t_ev");
    const cases: [string[], RegExp][] = [
      [["--tenant", "t_ev", "--type", "booking.created"], /needs --tenant ID --type TYPE --data JSON/],
      [["--tenant", "t_ev", "--type", "booking.created", "--data", "{oops"], /--data is not valid JSON/],
      [["--tenant", "t_ev", "--type", "booking.created", "--data", "[1]"], /--data must be a JSON object/],
      [["--tenant", "nobody", "--type", "booking.created", "--data", "{}"], /^no such tenant: nobody$/],
    ];
    for (const [args, message] of cases) {
      // WEBHOOKS_ADDR points nowhere: a refusal must come before anything is sent.
      const { code, stdout, stderr } = await cliWith(
        { DATABASE_URL: scratch.url, NOTIFY_ADDR: notifyAddr(), WEBHOOKS_ADDR: "127.0.0.1:1" },
        "event",
        "emit",
        ...args,
      );
      expect({ code, stdout }, args.join(" ")).toEqual({ code: 2, stdout: "" });
      expect((JSON.parse(stderr) as { error: string }).error).toMatch(message);
    }
  });

  it("says the stack seems down when the webhooks service is unreachable", async () => {
    await tenant("t_ev2");
    const { code, stderr } = await cliWith(
      { DATABASE_URL: scratch.url, NOTIFY_ADDR: notifyAddr(), WEBHOOKS_ADDR: "127.0.0.1:1" },
      ...["event", "emit", "--tenant", "t_ev2", "--type", "booking.created", "--data", '{"booking_id":"b_1"}'],
    );
    expect(code).toBe(1);
    expect((JSON.parse(stderr) as { error: string }).error).toMatch(
      /^the stack seems down: could not reach webhooks at 127\.0\.0\.1:1 .*run `npm start`$/,
    );
  }, 30_000);

  describe("capability report", () => {
    const report = (...args: string[]) => cli("capability", "report", ...args);

    it("records a pass: prints the capability, the manifest and no events for a first pass", async () => {
      await tenant("t_cap1");
      const { code, stdout, stderr } = await report(
        ...["--tenant", "t_cap1", "--capability", "messaging_channel", "--result", "pass"],
      );
      expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
      const out = JSON.parse(stdout) as Record<string, unknown>;
      expect(out.capability).toMatchObject({
        name: "messaging_channel",
        state: "on",
        required: true,
        lastResult: "pass",
      });
      expect(out.activation).toMatchObject({ tenantId: "t_cap1", state: "provisioning" });
      expect(out.emittedEvents).toEqual([]);
    });

    it("records a fail with a catalogue code; a live tenant's capability is suspended", async () => {
      await tenant("t_cap2");
      const pass = ["--tenant", "t_cap2", "--capability", "messaging_channel", "--result", "pass"];
      expect((await report(...pass)).code).toBe(0);
      expect((await cli("tenant", "activate", "--id", "t_cap2")).code).toBe(0);
      const { code, stdout, stderr } = await report(
        ...["--tenant", "t_cap2", "--capability", "messaging_channel", "--result", "fail"],
        ...["--reason", "capability.credentials_revoked"],
      );
      expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
      const out = JSON.parse(stdout) as Record<string, unknown>;
      expect(out.capability).toMatchObject({ state: "off", reasonCode: "capability.credentials_revoked" });
      expect(out.emittedEvents).toEqual(["capability.suspended"]);
      expect(out.activation).toMatchObject({ state: "live", blockingReasons: [] });
    });

    it("refuses a fail without a reason, an unknown reason, a bad name or result, and an unknown tenant with exit 2", async () => {
      await tenant("t_cap3");
      const cases: [string[], RegExp][] = [
        [["--capability", "messaging_channel", "--result", "fail"], /needs a reason code/],
        [
          ["--capability", "messaging_channel", "--result", "fail", "--reason", "capability.nope"],
          /not a capability reason code/,
        ],
        [
          ["--capability", "messaging_channel", "--result", "fail", "--reason", "tenant.not_found"],
          /not a capability reason code/,
        ],
        [["--capability", "Messaging", "--result", "pass"], /capability must be/],
        [["--capability", "messaging_channel", "--result", "maybe"], /--result pass\|fail/],
        [["--capability", "messaging_channel"], /--result pass\|fail/],
      ];
      for (const [args, message] of cases) {
        const { code, stdout, stderr } = await report("--tenant", "t_cap3", ...args);
        expect({ code, stdout }, args.join(" ")).toEqual({ code: 2, stdout: "" });
        expect((JSON.parse(stderr) as { error: string }).error, args.join(" ")).toMatch(message);
      }
      const missing = await report("--tenant", "nobody", "--capability", "messaging_channel", "--result", "pass");
      expect(missing.code).toBe(2);
      expect((JSON.parse(missing.stderr) as { error: string }).error).toBe("no such tenant: nobody");
      const listed = JSON.parse(
        (await report("--tenant", "t_cap3", "--capability", "messaging_channel", "--result", "pass")).stdout,
      ) as {
        capability: { lastResult: string };
      };
      expect(listed.capability.lastResult).toBe("pass");
    });
  });

  describe("usage record", () => {
    it("records tokens in the current UTC month and prints the month's usage; a repeated --record-id counts once", async () => {
      await tenant("t_use");
      const month = new Date().toISOString().slice(0, 7);
      const first = await cli("usage", "record", "--tenant", "t_use", "--tokens", "120", "--record-id", "meter-1");
      expect(first.code, first.stderr).toBe(0);
      expect(JSON.parse(first.stdout)).toEqual({
        tenantId: "t_use",
        month,
        unit: "tokens",
        tokensUsed: 120,
        softCap: null,
        hardCap: null,
        limitsVersion: 0,
        thresholds: [],
        replayed: false,
      });
      const again = await cli("usage", "record", "--tenant", "t_use", "--tokens", "120", "--record-id", "meter-1");
      expect(JSON.parse(again.stdout)).toMatchObject({ tokensUsed: 120, replayed: true });
      const more = await cli("usage", "record", "--tenant", "t_use", "--tokens", "5");
      expect(JSON.parse(more.stdout)).toMatchObject({ tokensUsed: 125, replayed: false });
    });

    it.each([
      [["--tenant", "t_use2"], /needs --tenant ID --tokens N/],
      [["--tenant", "t_use2", "--tokens", "0"], /--tokens must be a whole number from 1/],
      [["--tenant", "t_use2", "--tokens=-5"], /--tokens must be a whole number from 1/],
      [["--tenant", "t_use2", "--tokens", "1.5"], /--tokens must be a whole number from 1/],
      [["--tenant", "t_use2", "--tokens", "ten"], /--tokens must be a whole number from 1/],
      [["--tenant", "t_use2", "--tokens", "9007199254740992"], /--tokens must be a whole number from 1/],
      [["--tenant", "t_use2", "--tokens", "3", "--record-id", "has space"], /recordId must be 1-128/],
      [["--tenant", "nobody", "--tokens", "3"], /^no such tenant: nobody$/],
    ])("refuses %j on stderr with exit 2, recording nothing", async (args, message) => {
      await cli("tenant", "create", "--name", "t_use2", "--id", "t_use2");
      const { code, stdout, stderr } = await cli("usage", "record", ...args);
      expect({ code, stdout }).toEqual({ code: 2, stdout: "" });
      expect((JSON.parse(stderr) as { error: string }).error).toMatch(message);
      const db = new pg.Client({ connectionString: scratch.url });
      await db.connect();
      try {
        const { rows } = await db.query<{ n: string }>(
          "select count(*) as n from notify.usage_months where tenant_id = 't_use2'",
        );
        expect(rows[0]!.n).toBe("0");
      } finally {
        await db.end();
      }
    });

    it("says the stack seems down when notify is unreachable (exit 1)", async () => {
      const { code, stderr } = await cliWith(
        { DATABASE_URL: scratch.url, NOTIFY_ADDR: "127.0.0.1:1" },
        ...["usage", "record", "--tenant", "t_use", "--tokens", "1"],
      );
      expect(code).toBe(1);
      expect((JSON.parse(stderr) as { error: string }).error).toMatch(
        /^the stack seems down: could not reach notify at 127\.0\.0\.1:1/,
      );
    }, 30_000);
  });
});
