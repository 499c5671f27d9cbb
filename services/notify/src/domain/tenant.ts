import { randomBytes } from "node:crypto";
import { DomainError, InvalidArgumentError, NotFoundError } from "@platform/service-kit/errors";

export const tenantPlans = ["testing", "commercial"] as const;
export type TenantPlan = (typeof tenantPlans)[number];
export type TenantStatus = "pending_activation" | "active";

export interface Tenant {
  id: string;
  name: string;
  status: TenantStatus;
  activated: boolean;
  channelReady: boolean;
  version: number;
  lastErrorCode: string | null;
  plan: TenantPlan;
  createdAt: Date;
  /** Activation (domain/activation.ts): provisioning, validation, live or stalled. */
  activationState: "provisioning" | "validation" | "live" | "stalled";
  /** Why the plan last changed ("agreement_signed", ...); null until it changed. */
  planReason: string | null;
  planChangedAt: Date | null;
  /** The current UTC month ("YYYY-MM", the database's clock) and the sends counted in it. */
  month: string;
  monthSends: number;
}

export interface NewTenant {
  id: string;
  name: string;
  plan: TenantPlan;
}

const TENANT_ID = /^[A-Za-z0-9_-]{1,64}$/;

export class TenantNotFoundError extends NotFoundError {
  override name = "TenantNotFoundError";
  constructor() {
    // The message never echoes the id: an ungranted tenant must look exactly like a missing one.
    super("tenant.not_found", "no tenant with this id is available to this key");
  }
}

export class TenantExistsError extends DomainError {
  override name = "TenantExistsError";
  constructor(id: string) {
    super("already_exists", "tenant.already_exists", `tenant ${id} already exists`);
  }
}

export class InvalidTenantError extends InvalidArgumentError {
  override name = "InvalidTenantError";
  constructor(message: string) {
    super("tenant.invalid", message);
  }
}

export function isTenantId(value: string): boolean {
  return TENANT_ID.test(value);
}

/** notify's tenant check: an unknown or malformed id is simply "not found" (the partner learns nothing more). */
export function requireTenantId(id: string): string {
  if (!isTenantId(id)) throw new TenantNotFoundError();
  return id;
}

export function newTenantId(): string {
  return `ten_${randomBytes(12).toString("hex")}`;
}

/** Validates a tenant to create; an empty id means "assign one". */
export function validateNewTenant(input: { id: string; name: string; plan: TenantPlan | undefined }): NewTenant {
  const id = input.id === "" ? newTenantId() : input.id;
  if (!isTenantId(id)) throw new InvalidTenantError("id must be 1-64 characters of A-Z a-z 0-9 _ -");
  const name = input.name.trim();
  if (name.length === 0 || [...name].length > 200) throw new InvalidTenantError("name must be 1-200 characters");
  return { id, name, plan: input.plan ?? "testing" };
}

/**
 * Activation passes validation and leaves the messaging channel ready (the operator's override;
 * the gRPC ActivateTenant also records the activation state and emits tenant.activated).
 */
export function activate(tenant: Tenant): Tenant {
  return {
    ...tenant,
    status: "active",
    activated: true,
    channelReady: true,
    lastErrorCode: null,
    activationState: "live",
  };
}

export function withChannel(tenant: Tenant, ready: boolean): Tenant {
  return { ...tenant, channelReady: ready };
}
