import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const admin = join(import.meta.dirname, "..", "dist", "src", "cli", "admin.js");

describe("admin CLI", () => {
  let scratch: ScratchDatabase;
  const cli = (...args: string[]) =>
    run(process.execPath, [admin, ...args], { env: { PATH: process.env.PATH ?? "", DATABASE_URL: scratch.url } }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );

  beforeAll(async () => {
    scratch = await createScratchDatabase("admin");
  });
  afterAll(async () => scratch?.drop());

  it("creates a key with tenants and scopes, printing the key once as JSON", async () => {
    const { code, stdout, stderr } = await cli(
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
    [[], /usage: admin/],
  ])("refuses %j on stderr with exit 2", async (args, message) => {
    const { code, stdout, stderr } = await cli(...args);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect((JSON.parse(stderr) as { error: string }).error).toMatch(message);
  });

  it("exits 1 with a JSON error when the database is unreachable", async () => {
    const result = await run(process.execPath, [admin, "key", "create"], {
      env: { PATH: process.env.PATH ?? "", DATABASE_URL: "postgres://postgres@127.0.0.1:1/none" },
    }).catch((e: { code: number; stderr: string }) => e);
    expect((result as { code: number }).code).toBe(1);
    expect(JSON.parse((result as { stderr: string }).stderr)).toHaveProperty("error");
  }, 20_000);
});
