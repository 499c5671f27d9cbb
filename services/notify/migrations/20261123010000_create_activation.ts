import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261123010000_create_activation";

/**
 * Activation (issue 10): the tenant's activation state with the time of each step, and the last
 * check of each capability. Existing activated tenants are live.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable("tenants", (table) => {
    table.text("activation_state").notNullable().defaultTo("provisioning");
    table.timestamp("validation_started_at", { useTz: true }).nullable();
    table.timestamp("stalled_at", { useTz: true }).nullable();
    table.timestamp("activated_at", { useTz: true }).nullable();
    table.check(
      "activation_state in ('provisioning', 'validation', 'live', 'stalled')",
      [],
      "tenants_activation_state_check",
    );
  });
  await db("tenants")
    .update({ activation_state: "live", activated_at: db.ref("updated_at") })
    .where({ activated: true });
  await db.schema.createTable("tenant_capabilities", (table) => {
    table.text("tenant_id").notNullable().references("id").inTable("tenants").onDelete("cascade");
    table.text("name").notNullable();
    table.text("state").notNullable();
    table.text("last_result").notNullable();
    table.timestamp("last_checked_at", { useTz: true }).notNullable();
    table.text("reason_code").nullable();
    table.timestamp("changed_at", { useTz: true }).notNullable();
    table.primary(["tenant_id", "name"]);
    table.check("state in ('on', 'off')", [], "tenant_capabilities_state_check");
    table.check("last_result in ('pass', 'fail')", [], "tenant_capabilities_result_check");
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable("tenant_capabilities");
  await db.schema.alterTable("tenants", (table) => {
    table.dropChecks(["tenants_activation_state_check"]);
    table.dropColumns("activation_state", "validation_started_at", "stalled_at", "activated_at");
  });
}
