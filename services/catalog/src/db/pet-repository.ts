import { preparedStatement, queryRows, type Knex } from "@platform/service-kit/postgres";
import { PetNotFoundError, type NewPet, type Pet, type PetStatus } from "../domain/pet.js";
import type { PetPageQuery } from "../domain/pet-page.js";

interface PetRow {
  id: string;
  name: string;
  category_id: string;
  status: PetStatus;
}

const columns = ["id", "name", "category_id", "status"];

/**
 * The list's two statements, prepared once per connection (Parse on a connection's first use
 * only; every later page is Bind and Execute, so Postgres neither parses nor plans the text again).
 * Each is sargable as written, so the plan Postgres caches for it is an index range scan whatever
 * the values: the primary key from the cursor on, or (status, id) from the cursor on. One
 * statement with "$1 is null or status = $1" would cache a plan that scans every pet before the
 * cursor. With no cursor, the first page starts after the smallest bigint (no id is smaller).
 */
export const listPetsSql = preparedStatement(
  "catalog_list_pets",
  "select id, name, category_id, status from pets where id > $1 order by id asc limit $2",
);
export const listPetsByStatusSql = preparedStatement(
  "catalog_list_pets_by_status",
  "select id, name, category_id, status from pets where status = $1 and id > $2 order by id asc limit $3",
);
const BEFORE_EVERY_ID = "-9223372036854775808";

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
      // The hot path: a prepared statement straight to pg (no query building per call).
      const afterId = query.afterId ?? BEFORE_EVERY_ID;
      const rows = await (query.status === undefined
        ? queryRows<PetRow>(db, listPetsSql, [afterId, query.limit + 1])
        : queryRows<PetRow>(db, listPetsByStatusSql, [query.status, afterId, query.limit + 1]));
      return rows.map(toPet);
    },
  };
}
