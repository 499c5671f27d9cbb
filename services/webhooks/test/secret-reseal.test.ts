import { randomBytes } from "node:crypto";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { WEBHOOKS_SCHEMA, WEBHOOKS_SEARCH_PATH } from "../src/config.js";
import { resealEndpointSecrets, sealedSecretsByKeyId } from "../src/db/secret-reseal.js";
import { newEndpointId } from "../src/domain/ids.js";
import { generateSigningSecret, openSecret, parseSecretsKey, sealSecret } from "../src/domain/secret-box.js";

const key = () => randomBytes(32).toString("base64");

describe("rotating SECRETS_KEY: resealing stored signing secrets under the new key", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  const oldKey = key();
  const newKey = key();

  beforeAll(async () => {
    scratch = await createScratchDatabase("wh_reseal");
    db = createDatabase({ url: scratch.url, schema: WEBHOOKS_SCHEMA, searchPath: WEBHOOKS_SEARCH_PATH, poolMax: 4 });
    await migrateToLatest(db, WEBHOOKS_SCHEMA, migrations);
  });
  afterAll(async () => {
    await db?.destroy();
    await scratch?.drop();
  });

  async function insertEndpoint(secret: string, previous: string | null, ring: ReturnType<typeof parseSecretsKey>) {
    const id = newEndpointId();
    await db("endpoints").insert({
      id,
      tenant_id: "acme",
      url: "https://hooks.example.com/x",
      description: "d",
      event_types: ["booking.*"],
      api_version: "2026-07-01",
      secret_sealed: sealSecret(ring, secret, id),
      previous_secret_sealed: previous === null ? null : sealSecret(ring, previous, id),
    });
    return id;
  }

  it("moves every secret (current and previous) to the active key, in batches, keeping the plaintext", async () => {
    const before = parseSecretsKey(oldKey); // a bare key is k1
    const secrets = new Map<string, [string, string | null]>();
    for (let i = 0; i < 7; i += 1) {
      const pair: [string, string | null] = [generateSigningSecret(), i % 2 === 0 ? generateSigningSecret() : null];
      secrets.set(await insertEndpoint(pair[0], pair[1], before), pair);
    }
    expect(await sealedSecretsByKeyId(db)).toEqual({ k1: 11 });

    const during = parseSecretsKey(`k2:${newKey},k1:${oldKey}`);
    expect(await resealEndpointSecrets(db, during, { batch: 3 })).toBe(7);
    expect(await sealedSecretsByKeyId(db)).toEqual({ k2: 11 });
    expect(await resealEndpointSecrets(db, during, { batch: 3 })).toBe(0);

    // Step 3: the old key is gone from the ring and every secret still opens.
    const after = parseSecretsKey(`k2:${newKey}`);
    const rows = await db("endpoints").select<
      { id: string; secret_sealed: string; previous_secret_sealed: string | null }[]
    >("id", "secret_sealed", "previous_secret_sealed");
    for (const row of rows) {
      const [current, previous] = secrets.get(row.id)!;
      expect(openSecret(after, row.secret_sealed, row.id)).toBe(current);
      expect(row.previous_secret_sealed === null ? null : openSecret(after, row.previous_secret_sealed, row.id)).toBe(
        previous,
      );
      expect(row.secret_sealed).not.toContain(current.slice(6));
    }
  });

  it("leaves a secret under a key the ring no longer holds, and goes on with the others", async () => {
    const lost = parseSecretsKey(`k0:${key()}`);
    const stranded = await insertEndpoint(generateSigningSecret(), null, lost);
    const ring = parseSecretsKey(`k3:${key()},k2:${newKey}`);
    expect(await resealEndpointSecrets(db, ring, { batch: 2 })).toBe(7);
    const counts = await sealedSecretsByKeyId(db);
    expect(counts).toEqual({ k3: 11, k0: 1 });
    const row = await db<{ id: string; secret_sealed: string }>("endpoints")
      .first("secret_sealed")
      .where({ id: stranded });
    expect(row!.secret_sealed.startsWith("v1.k0.")).toBe(true);
  });
});
