/**
 * Endpoints in Postgres. Every query names the tenant: an endpoint of another tenant, or a deleted
 * one, is simply not found. Secrets arrive sealed (secret-box.ts) and leave sealed; this module
 * never sees a plaintext secret.
 */
import type { Knex } from "@platform/service-kit/postgres";
import { EndpointNotFoundError, type EndpointChanges, type NewEndpoint } from "../domain/endpoint.js";
import { ENDPOINT_ID } from "../domain/ids.js";

export interface EndpointRecord {
  id: string;
  tenantId: string;
  url: string;
  description: string;
  eventTypes: string[];
  apiVersion: string;
  paused: boolean;
  attentionReason: string | null;
  /** The error class of the dead-letter that paused the endpoint, and when (cleared with the reason). */
  attentionCause: string | null;
  attentionSince: Date | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
  previousSecretExpiresAt: Date | null;
  /** Deliveries per second from every replica together; null: unlimited. */
  rateLimit: number | null;
}

/** An endpoint with its sealed secrets, as the row holds them. */
export interface EndpointWithSecrets extends EndpointRecord {
  secretSealed: string;
  previousSecretSealed: string | null;
}

interface EndpointRow {
  id: string;
  seq: string;
  tenant_id: string;
  url: string;
  description: string;
  event_types: string[];
  api_version: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  paused: boolean;
  attention_reason: string | null;
  attention_cause: string | null;
  attention_since: Date | null;
  rate_limit: number | null;
  version: string;
  created_at: Date;
  updated_at: Date;
}

const columns = [
  "id",
  "seq",
  "tenant_id",
  "url",
  "description",
  "event_types",
  "api_version",
  "secret_sealed",
  "previous_secret_sealed",
  "previous_secret_expires_at",
  "paused",
  "attention_reason",
  "attention_cause",
  "attention_since",
  "rate_limit",
  "version",
  "created_at",
  "updated_at",
];

function fromRow(row: EndpointRow): EndpointWithSecrets {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    url: row.url,
    description: row.description,
    eventTypes: row.event_types,
    apiVersion: row.api_version,
    paused: row.paused,
    attentionReason: row.attention_reason,
    attentionCause: row.attention_cause,
    attentionSince: row.attention_since,
    version: Number(row.version),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    rateLimit: row.rate_limit,
    secretSealed: row.secret_sealed,
    previousSecretSealed: row.previous_secret_sealed,
  };
}

/** What a change writes besides the version bump and updated_at. */
export interface EndpointPatch extends EndpointChanges {
  paused?: boolean;
  /** Clearing the reason clears its cause and time too. */
  attentionReason?: string | null;
  secretSealed?: string;
  previousSecretSealed?: string | null;
  previousSecretExpiresAt?: Date | null;
  deletedAt?: Date;
}

export interface EndpointPage {
  endpoints: EndpointRecord[];
  /** The seq of the last endpoint when more follow; undefined on the last page. */
  nextAfterSeq: string | undefined;
}

export interface EndpointStore {
  insert(
    trx: Knex.Transaction,
    endpoint: NewEndpoint & { id: string; tenantId: string; secretSealed: string; now: Date },
  ): Promise<EndpointWithSecrets>;
  /** The live endpoint; EndpointNotFoundError otherwise. */
  get(db: Knex | Knex.Transaction, tenantId: string, endpointId: string): Promise<EndpointWithSecrets>;
  /** The live endpoint, locked until the transaction ends; EndpointNotFoundError otherwise. */
  lock(trx: Knex.Transaction, tenantId: string, endpointId: string): Promise<EndpointWithSecrets>;
  /** Writes `patch`, bumps the version and updated_at; the endpoint must be locked by `trx`. */
  update(trx: Knex.Transaction, endpointId: string, patch: EndpointPatch, now: Date): Promise<EndpointWithSecrets>;
  /** Live endpoints of the tenant, newest first, after the one with seq `afterSeq`. */
  list(tenantId: string, options: { limit: number; afterSeq: number | undefined }): Promise<EndpointPage>;
}

export function createEndpointStore(db: Knex): EndpointStore {
  const live = (query: Knex | Knex.Transaction, tenantId: string, endpointId: string) =>
    query("endpoints").where({ tenant_id: tenantId, id: endpointId }).whereNull("deleted_at");
  const found = (row: EndpointRow | undefined) => {
    if (!row) throw new EndpointNotFoundError();
    return fromRow(row);
  };
  return {
    async insert(trx, endpoint) {
      const [row] = await trx("endpoints")
        .insert({
          id: endpoint.id,
          tenant_id: endpoint.tenantId,
          url: endpoint.url,
          description: endpoint.description,
          event_types: endpoint.eventTypes,
          api_version: endpoint.apiVersion,
          rate_limit: endpoint.rateLimit,
          secret_sealed: endpoint.secretSealed,
          created_at: endpoint.now,
          updated_at: endpoint.now,
        })
        .returning<EndpointRow[]>(columns);
      return fromRow(row!);
    },
    async get(query, tenantId, endpointId) {
      if (!ENDPOINT_ID.test(endpointId)) throw new EndpointNotFoundError();
      return found(await live(query, tenantId, endpointId).first<EndpointRow | undefined>(columns));
    },
    async lock(trx, tenantId, endpointId) {
      if (!ENDPOINT_ID.test(endpointId)) throw new EndpointNotFoundError();
      return found(await live(trx, tenantId, endpointId).forUpdate().first<EndpointRow | undefined>(columns));
    },
    async update(trx, endpointId, patch, now) {
      const set: Record<string, unknown> = { version: trx.raw("version + 1"), updated_at: now };
      if (patch.url !== undefined) set.url = patch.url;
      if (patch.description !== undefined) set.description = patch.description;
      if (patch.eventTypes !== undefined) set.event_types = patch.eventTypes;
      if (patch.rateLimit !== undefined) set.rate_limit = patch.rateLimit;
      if (patch.paused !== undefined) set.paused = patch.paused;
      if (patch.attentionReason !== undefined) set.attention_reason = patch.attentionReason;
      if (patch.attentionReason === null) Object.assign(set, { attention_cause: null, attention_since: null });
      if (patch.secretSealed !== undefined) set.secret_sealed = patch.secretSealed;
      if (patch.previousSecretSealed !== undefined) set.previous_secret_sealed = patch.previousSecretSealed;
      if (patch.previousSecretExpiresAt !== undefined) set.previous_secret_expires_at = patch.previousSecretExpiresAt;
      if (patch.deletedAt !== undefined) set.deleted_at = patch.deletedAt;
      const [row] = await trx("endpoints").update(set).where({ id: endpointId }).returning<EndpointRow[]>(columns);
      return found(row);
    },
    async list(tenantId, { limit, afterSeq }) {
      const query = db("endpoints")
        .select<EndpointRow[]>(columns)
        .where({ tenant_id: tenantId })
        .whereNull("deleted_at")
        .orderBy("seq", "desc")
        .limit(limit + 1);
      if (afterSeq !== undefined) void query.andWhere("seq", "<", afterSeq);
      const rows = await query;
      const page = rows.slice(0, limit);
      return {
        endpoints: page.map(fromRow),
        nextAfterSeq: rows.length > limit ? page.at(-1)!.seq : undefined,
      };
    },
  };
}

/** The endpoint without its secrets, as answers carry it. */
export function withoutSecrets(endpoint: EndpointWithSecrets): EndpointRecord {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  const { secretSealed, previousSecretSealed, ...record } = endpoint;
  return record;
}
