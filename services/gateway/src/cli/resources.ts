/**
 * What an admin command may use: the gateway's database and the clients of notify and webhooks,
 * each opened on first use and closed when the command ends.
 */
import { randomUUID } from "node:crypto";
import {
  createDatabase,
  isTransientDatabaseError,
  migrateToLatest,
  waitForDatabase,
  type Knex,
} from "@platform/service-kit/postgres";
import { traceIdOf } from "@platform/service-kit/tracing";
import { migrations } from "../../migrations/index.js";
import { GATEWAY_SCHEMA, type GatewayConfig } from "../config.js";
import { createEventClient, type EventClient } from "../grpc/event-client.js";
import { createNotifyClient, type NotifyClient } from "../grpc/notify-client.js";
import { createProjectionClient, type ProjectionClient } from "../grpc/projection-client.js";
import { commandsUsing } from "./command-table.js";
import { StackDownError } from "./errors.js";

/** What a command may use; each is opened on first use and closed at exit. */
export interface Resources {
  db(): Promise<Knex>;
  config: GatewayConfig;
  notify(): NotifyClient;
  /** Where notify was looked for (for messages). */
  notifyAddress: string;
  events(): EventClient;
  eventsAddress: string;
  projections(): ProjectionClient;
  /** A warning on stderr; the command still succeeds. */
  warn(message: string): void;
  /** The options of every gRPC call: a new request id, and the command's trace context when traced. */
  call(): { requestId: string; traceparent?: string | undefined };
  /** The command's trace id when tracing is on (OTEL_EXPORTER_OTLP_ENDPOINT). */
  traceId: string | undefined;
}

/** A row of the admin CLI's table, its call typed by the row's options: `adminCommand({ name, ... })`. */
export const adminCommand = commandsUsing<Resources>();

/** host:port/database of a Postgres URL: never the password. */
function databaseAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || "5432"}${parsed.pathname}`;
  } catch {
    return "DATABASE_URL";
  }
}

export function openResources(
  config: GatewayConfig,
  traceparent: string | undefined,
  stderr: (text: string) => void,
): { resources: Resources; close(): Promise<void> } {
  let db: Promise<Knex> | undefined;
  let notify: NotifyClient | undefined;
  let events: EventClient | undefined;
  let projections: ProjectionClient | undefined;
  return {
    resources: {
      config,
      db: () =>
        (db ??= (async () => {
          const knex = createDatabase({ url: config.DATABASE_URL, schema: GATEWAY_SCHEMA, poolMax: 2 });
          try {
            await waitForDatabase(knex, 5_000);
          } catch (error) {
            await knex.destroy();
            if (isTransientDatabaseError(error)) {
              throw new StackDownError("Postgres", databaseAddress(config.DATABASE_URL), error);
            }
            throw error;
          }
          await migrateToLatest(knex, GATEWAY_SCHEMA, migrations);
          return knex;
        })()),
      notify: () => (notify ??= createNotifyClient(config.NOTIFY_ADDR, config.UPSTREAM_TIMEOUT)),
      notifyAddress: config.NOTIFY_ADDR,
      events: () => (events ??= createEventClient(config.WEBHOOKS_ADDR, config.UPSTREAM_TIMEOUT)),
      eventsAddress: config.WEBHOOKS_ADDR,
      projections: () => (projections ??= createProjectionClient(config.NOTIFY_ADDR, config.UPSTREAM_TIMEOUT)),
      warn: (message) => stderr(`${JSON.stringify({ warning: message })}\n`),
      call: () => ({ requestId: `admin_${randomUUID()}`, traceparent }),
      traceId: traceIdOf(traceparent),
    },
    async close() {
      notify?.close();
      events?.close();
      projections?.close();
      await (await db?.catch(() => undefined))?.destroy();
    },
  };
}
