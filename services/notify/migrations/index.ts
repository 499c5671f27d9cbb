import type { Migration } from "@platform/service-kit/postgres";
import * as createTenants from "./20261122000000_create_tenants.js";
import * as createNotifications from "./20261122010000_create_notifications.js";
import * as createOutbox from "./20261123000000_create_outbox.js";
import * as createActivation from "./20261123010000_create_activation.js";
import * as createUsageMonths from "./20261123020000_create_usage_months.js";
import * as createProjections from "./20261123030000_create_projections.js";
import * as outboxTraceparent from "./20261124120000_outbox_traceparent.js";
import * as projectionCauseAndActor from "./20261124150000_projection_cause_and_actor.js";
import * as tenantPlanChanges from "./20261124170000_tenant_plan_changes.js";
import * as applyProjectedEvents from "./20261124200000_apply_projected_events.js";
import * as tenantChannels from "./20261127100000_tenant_channels.js";
import * as providerCallbacks from "./20261127110000_provider_callbacks.js";
import * as channelPacing from "./20261127120000_channel_pacing.js";
import * as tenantChannelAnnouncements from "./20261127130000_tenant_channel_announcements.js";
import * as conversationMessagesByNotification from "./20261127190000_conversation_messages_by_notification.js";
import * as paceWithoutRowLock from "./20261128130000_pace_without_row_lock.js";
import * as allowanceEventsOnDemand from "./20261128140000_allowance_events_on_demand.js";
import * as sendBatches from "./20261129000000_send_batches.js";

/** Every migration of the notify schema, oldest first. Add new files here. */
export const migrations: Migration[] = [
  createTenants,
  createNotifications,
  createOutbox,
  createActivation,
  createUsageMonths,
  createProjections,
  outboxTraceparent,
  projectionCauseAndActor,
  tenantPlanChanges,
  applyProjectedEvents,
  tenantChannels,
  providerCallbacks,
  channelPacing,
  tenantChannelAnnouncements,
  conversationMessagesByNotification,
  paceWithoutRowLock,
  allowanceEventsOnDemand,
  sendBatches,
];
