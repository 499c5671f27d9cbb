import type { Knex } from "knex";
import type { CallContext } from "./grpc-server.js";
import { fingerprintOf, runIdempotently, type IdempotencyOptions } from "./idempotency.js";

/**
 * A mutation, declared: the steps every state-changing gRPC method takes, written once.
 *
 * A handler declares what is its own (checks, the effect, the fact it records, its log line, its
 * answer); `declareMutation` runs them in one order:
 *   0. `validate`, for the few methods whose checks of the request alone have always answered
 *      before the tenant was looked at (most have none: their checks go in `prepare`);
 *   1. the tenant check (the service's own: which tenant the request is for);
 *   2. `prepare`: validation and checks that need no transaction (nothing is claimed yet);
 *   3. the fingerprint: the method's path (from the generated definition) and the request's bytes
 *      without its Idempotency-Key and actor (who asks and which attempt are not what is asked);
 *   4. one transaction: run-once per (tenant, Idempotency-Key) when `once` (runIdempotently), a
 *      plain transaction otherwise; in it the `effect`, then `record` (the facts for the outbox),
 *      so effect, facts and the kept answer commit together;
 *   5. after a first commit, never on a replay: the log line, the relay kick (only when `record`
 *      wrote a fact) and `afterCommit` (work that must follow the commit, such as enqueueing);
 *   6. the answer, from what was kept (a replay answers from the first execution's).
 * Like Svix's idempotency layer, no handler sees the key, the fingerprint or the claim.
 */

/** The generated method definition (ts-proto `XServiceService.method`): its path names the operation. */
export interface MutationMethod<Req, Res> {
  path: string;
  requestSerialize(value: Req): Buffer;
  responseSerialize(value: Res): Buffer;
}

/** What a step is given: the request, its tenant, what `prepare` returned and the call's context. */
export interface MutationInput<Req, Prepared> {
  request: Req;
  /** The tenant the request is for ("" for a mutation declared `tenant: false`). */
  tenantId: string;
  prepared: Prepared;
  call: CallContext;
}

export interface MutationSpec<Req, Prepared, Effect, Kept, Res> {
  /**
   * `true` (default): the request's Idempotency-Key makes it run once per tenant, and a repeat
   * answers as the first did. `false`: one plain transaction, every call (no key on the method).
   */
  once?: boolean;
  /** `false`: the method is not scoped to a tenant (no tenant check; `once` needs a tenant). */
  tenant?: boolean;
  /**
   * Checks of the request alone that come before the tenant check, for a method whose bad request
   * has always been refused before its tenant was looked at (so it keeps getting the same error).
   */
  validate?(request: Req, call: CallContext): void | Promise<void>;
  /** Checks before anything is claimed or locked (a refusal here claims no key). */
  prepare?(request: Req, call: CallContext, tenantId: string): Prepared | Promise<Prepared>;
  /** The change itself, on the transaction every write of it must use. */
  effect(trx: Knex.Transaction, input: MutationInput<Req, Prepared>): Promise<Effect>;
  /**
   * The facts of the change (the activity record, the events) appended to the outbox in the
   * effect's transaction, after the effect; returns how many it wrote (0: no kick).
   */
  record?(trx: Knex.Transaction, effect: Effect, input: MutationInput<Req, Prepared>): Promise<number>;
  /**
   * What a replay answers from, stored with the key as JSON (so plain values: ISO strings, not
   * Dates); by default the effect's value itself.
   */
  keep?(effect: Effect, input: MutationInput<Req, Prepared>): Kept;
  /** The log line of a first execution (at info): its fields and message; undefined: none. */
  log?(effect: Effect, input: MutationInput<Req, Prepared>): readonly [Record<string, unknown>, string] | undefined;
  /** After a first commit, after the kick: work that must follow the commit (never on a replay). */
  afterCommit?(effect: Effect, input: MutationInput<Req, Prepared>): Promise<void>;
  /** The response, from what was kept; `replayed` is true for a repeat of the key. */
  answer(kept: Kept, replayed: boolean, input: MutationInput<Req, Prepared>): Res | Promise<Res>;
}

export interface MutationDeps {
  db: Knex;
  /** The keys' lease and lifetime; needed when a mutation is run-once (`once`, the default). */
  idempotency?: IdempotencyOptions;
  /**
   * The service's tenant check: the tenant a request is for, or a refusal; needed when a
   * mutation is scoped to a tenant (`tenant`, the default).
   */
  tenantOf?(request: { tenantId: string }): string;
  /** Wakes the service's outbox relay so a recorded fact is published now, not at its next poll. */
  kick?(): void;
}

/** The request fields no fingerprint includes. */
interface Unfingerprinted {
  idempotencyKey?: string;
  actor?: unknown;
}

/** The operation a method's fingerprints name: its path without the leading "/" ("pkg.v1.Service/Method"). */
export function operationOf(method: { path: string }): string {
  return method.path.replace(/^\//, "");
}

/** SHA-256 over the method's name (its path without the leading "/") and the request without key and actor. */
export function mutationFingerprint<Req>(method: MutationMethod<Req, unknown>, request: Req): string {
  const what = { ...request, idempotencyKey: "", actor: undefined } satisfies Unfingerprinted;
  return fingerprintOf(operationOf(method), method.requestSerialize(what));
}

/**
 * The service's `declare`: `declare(XServiceService.method, spec)` is the method's handler,
 * `(request, call) => Promise<response>`, fit for `UnaryHandlers`.
 */
export function mutationsOf(deps: MutationDeps) {
  return function declareMutation<Req extends object, Res, Prepared = undefined, Effect = unknown, Kept = Effect>(
    method: MutationMethod<Req, Res>,
    spec: MutationSpec<Req, Prepared, Effect, Kept, Res>,
  ): (request: Req, call: CallContext) => Promise<Res> {
    const once = spec.once ?? true;
    const scoped = spec.tenant ?? true;
    if (once && !scoped) throw new Error(`${method.path}: a run-once mutation needs a tenant to scope its key`);
    if (scoped && !deps.tenantOf) throw new Error(`${method.path}: a tenant's mutation needs the tenant check`);
    if (once && !deps.idempotency) throw new Error(`${method.path}: a run-once mutation needs the idempotency options`);
    const keep = (effect: Effect, input: MutationInput<Req, Prepared>): Kept =>
      spec.keep ? spec.keep(effect, input) : (effect as unknown as Kept);

    return async (request, call) => {
      await spec.validate?.(request, call);
      const { tenantId: asked = "", idempotencyKey = "" } = request as Unfingerprinted & { tenantId?: string };
      const tenantId = scoped ? deps.tenantOf!({ tenantId: asked }) : "";
      const prepared = (await spec.prepare?.(request, call, tenantId)) as Prepared;
      const input: MutationInput<Req, Prepared> = { request, tenantId, prepared, call };
      let first: { effect: Effect; recorded: number } | undefined;
      const inTransaction = async (trx: Knex.Transaction) => {
        const effect = await spec.effect(trx, input);
        const recorded = (await spec.record?.(trx, effect, input)) ?? 0;
        first = { effect, recorded };
        return keep(effect, input);
      };
      let kept: Kept;
      let replayed = false;
      if (once) {
        const command = { scope: tenantId, key: idempotencyKey, fingerprint: mutationFingerprint(method, request) };
        const outcome = await runIdempotently(deps.db, command, inTransaction, deps.idempotency);
        kept = outcome.result;
        replayed = outcome.replayed;
      } else {
        kept = await deps.db.transaction(inTransaction);
      }
      if (!replayed && first) {
        const line = spec.log?.(first.effect, input);
        if (line) call.logger.info(line[0], line[1]);
        if (first.recorded > 0) deps.kick?.();
        await spec.afterCommit?.(first.effect, input);
      }
      return spec.answer(kept, replayed, input);
    };
  };
}
