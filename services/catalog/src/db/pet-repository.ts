import { queryRows, type Knex } from "@platform/service-kit/postgres";
import { PetNotFoundError, type NewPet, type Pet, type PetStatus } from "../domain/pet.js";
import type { PetPageQuery } from "../domain/pet-page.js";

interface PetRow {
  id: string;
  name: string;
  category_id: string;
  status: PetStatus;
}

const columns = ["id", "name", "category_id", "status"];

const listPageSql = `select id, name, category_id, status from pets
  where ($1::text is null or status = $1::text) and ($2::bigint is null or id > $2::bigint)
  order by id asc limit $3`;

function toPet(row: PetRow): Pet {
  return { id: String(row.id), name: row.name, categoryId: String(row.category_id), status: row.status };
}

export interface PetRepository {
  /** Inserts a pet; inside `trx` when given (an idempotent creation records its key there too). */
  create(pet: NewPet, trx?: Knex.Transaction): Promise<Pet>;
  get(id: string): Promise<Pet>;
  /** Up to query.limit + 1 pets after query.afterId, by id; the extra row says a next page exists. */
  listPageWithLookahead(query: PetPageQuery): Promise<Pet[]>;
}

/** Pets in the catalog schema (bigint ids come back from pg as strings, kept exact). */
export function createPetRepository(db: Knex): PetRepository {
  return {
    async create(pet, trx) {
      const [row] = await (trx ?? db)("pets")
        .insert({ name: pet.name, category_id: pet.categoryId, status: pet.status })
        .returning<PetRow[]>(columns);
      return toPet(row!);
    },
    async get(id) {
      const row = await db("pets").first<PetRow | undefined>(columns).where({ id });
      if (!row) throw new PetNotFoundError(id);
      return toPet(row);
    },
    async listPageWithLookahead(query) {
      // The hot path: fixed SQL text straight to pg (no query building per call), nulls meaning
      // "no filter".
      const rows = await queryRows<PetRow>(db, listPageSql, [
        query.status ?? null,
        query.afterId ?? null,
        query.limit + 1,
      ]);
      return rows.map(toPet);
    },
  };
}
