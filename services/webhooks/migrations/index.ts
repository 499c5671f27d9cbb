import type { Migration } from "@platform/service-kit/postgres";
import * as createWebhooks from "./20261122100000_create_webhooks.js";
import * as createOutbox from "./20261122110000_create_outbox.js";
import * as keepOutbox from "./20261122230000_keep_outbox_until_fanned_out.js";
import * as traceContext from "./20261124120000_trace_context.js";
import * as recoveries from "./20261124150000_recoveries.js";
import * as publishEvent from "./20261124180000_publish_event_function.js";
import * as endpointRateLimit from "./20261127160000_endpoint_rate_limit.js";
import * as tenantLog from "./20261127170000_deliveries_tenant_log.js";
import * as backlogIndex from "./20261127190000_deliveries_backlog_idx.js";
import * as historyPartitions from "./20261127200000_history_partitions.js";
import * as typeLogIndex from "./20261128100000_deliveries_type_log_idx.js";
import * as endpointsDeletedIndex from "./20261128120000_endpoints_deleted_idx.js";
import * as deliveriesFillfactor from "./20261128150000_deliveries_fillfactor.js";

/** Every migration of the webhooks schema, oldest first. Add new files here. */
export const migrations: Migration[] = [
  createWebhooks,
  createOutbox,
  keepOutbox,
  traceContext,
  recoveries,
  publishEvent,
  endpointRateLimit,
  tenantLog,
  backlogIndex,
  historyPartitions,
  typeLogIndex,
  endpointsDeletedIndex,
  deliveriesFillfactor,
];
