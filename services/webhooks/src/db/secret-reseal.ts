/**
 * Step 2 of rotating SECRETS_KEY (docs/operations.md): every signing secret sealed under a key
 * that is no longer the active one is opened with its old key and sealed again with the active
 * key, a batch at a time, each row in its own short transaction (`for update skip locked`, so
 * several replicas can run it at once). The webhooks service runs it at start-up; it logs how
 * many it resealed and how many remain under each retired key id.
 */
import type { Knex } from "@platform/service-kit/postgres";
import type { Logger } from "pino";
import { needsReseal, resealSecret, SecretBoxError, sealedKeyId, type SecretKeyRing } from "../domain/secret-box.js";

interface SealedRow {
  id: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
}

/** Reseals every endpoint secret not under the active key; answers how many endpoints changed. */
export async function resealEndpointSecrets(
  db: Knex,
  ring: SecretKeyRing,
  options: { batch?: number; logger?: Logger } = {},
): Promise<number> {
  const batch = options.batch ?? 100;
  const activePrefix = `v1.${ring.activeKeyId}.`;
  let resealed = 0;
  let after = "";
  const unopenable: string[] = [];
  for (;;) {
    const seen = await db.transaction(async (trx) => {
      const rows = await trx<SealedRow>("endpoints")
        .select("id", "secret_sealed", "previous_secret_sealed")
        .where((q) =>
          q
            .whereRaw("left(secret_sealed, ?) <> ?", [activePrefix.length, activePrefix])
            .orWhereRaw("(previous_secret_sealed is not null and left(previous_secret_sealed, ?) <> ?)", [
              activePrefix.length,
              activePrefix,
            ]),
        )
        .andWhere("id", ">", after)
        .orderBy("id")
        .limit(batch)
        .forUpdate()
        .skipLocked();
      for (const row of rows) {
        const reseal = (sealed: string) => (needsReseal(ring, sealed) ? resealSecret(ring, sealed, row.id) : sealed);
        try {
          await trx("endpoints")
            .update({
              secret_sealed: reseal(row.secret_sealed),
              previous_secret_sealed: row.previous_secret_sealed === null ? null : reseal(row.previous_secret_sealed),
            })
            .where({ id: row.id });
          resealed += 1;
        } catch (error) {
          // A key id the ring no longer holds (removed too early): leave the row, say so below.
          if (!(error instanceof SecretBoxError)) throw error;
          unopenable.push(row.id);
        }
      }
      return rows;
    });
    if (seen.length > 0) after = seen[seen.length - 1]!.id;
    if (seen.length < batch) break;
  }
  if (resealed > 0) options.logger?.info({ resealed, activeKeyId: ring.activeKeyId }, "signing secrets resealed");
  if (unopenable.length > 0) {
    options.logger?.error(
      { endpoints: unopenable.length, firstEndpointId: unopenable[0] },
      "signing secrets sealed under a key SECRETS_KEY no longer holds: put that key back in SECRETS_KEY",
    );
  }
  return resealed;
}

/** How many sealed secrets each key id still holds (operators check that a retired id reached 0). */
export async function sealedSecretsByKeyId(db: Knex): Promise<Record<string, number>> {
  const rows = await db<SealedRow>("endpoints").select("secret_sealed", "previous_secret_sealed");
  const counts: Record<string, number> = {};
  for (const row of rows) {
    for (const sealed of [row.secret_sealed, row.previous_secret_sealed]) {
      if (sealed !== null) counts[sealedKeyId(sealed)] = (counts[sealedKeyId(sealed)] ?? 0) + 1;
    }
  }
  return counts;
}
