/**
 * The one catalogue of stable codes. Every problem `code`, `lastErrorCode`,
 * `blockingReasons[].code` and reason code the platform produces is here, with its meaning and the
 * client's reaction; the gateway's problem documents and the OpenAPI document are built from it,
 * notify checks reported reason codes against it, and a test fails on a code used anywhere in the
 * code that it does not hold. One file per area under catalogue/.
 */
import { activationCodes } from "./catalogue/activation.js";
import { authCodes } from "./catalogue/auth.js";
import { consoleCodes } from "./catalogue/console.js";
import { eventCodes } from "./catalogue/event.js";
import { notificationCodes } from "./catalogue/notification.js";
import { petCodes } from "./catalogue/pet.js";
import { projectionCodes } from "./catalogue/projection.js";
import { requestCodes } from "./catalogue/request.js";
import { serviceCodes } from "./catalogue/service.js";
import { tenantCodes } from "./catalogue/tenant.js";
import { usageCodes } from "./catalogue/usage.js";
import { webhookCodes } from "./catalogue/webhook.js";
import type { CodeEntry, CodeUse } from "./code-entry.js";

export type { CodeEntry, CodeUse } from "./code-entry.js";
export { statusReactions } from "./statuses.js";

export const codeCatalogue = {
  ...requestCodes,
  ...authCodes,
  ...tenantCodes,
  ...consoleCodes,
  ...usageCodes,
  ...activationCodes,
  ...notificationCodes,
  ...webhookCodes,
  ...eventCodes,
  ...projectionCodes,
  ...serviceCodes,
  ...petCodes,
} as const;

export type CatalogueCode = keyof typeof codeCatalogue;

export function isCatalogueCode(code: string): code is CatalogueCode {
  return Object.hasOwn(codeCatalogue, code);
}

export function codeEntry(code: string): CodeEntry | undefined {
  return isCatalogueCode(code) ? codeCatalogue[code] : undefined;
}

/** Where a code was expected as `use` but the catalogue does not hold it (or not as that use). */
export class UncataloguedCodeError extends Error {
  override name = "UncataloguedCodeError";
  constructor(
    readonly code: string,
    readonly use: CodeUse,
  ) {
    super(
      isCatalogueCode(code)
        ? `code ${JSON.stringify(code)} is catalogued but not as ${use} (packages/codes/src/catalogue)`
        : `code ${JSON.stringify(code)} is not in the code catalogue (packages/codes/src/catalogue)`,
    );
  }
}

/** Whether `code` is a catalogue code used as `use`. */
export function isCataloguedAs(code: string, use: CodeUse): code is CatalogueCode {
  const entry = codeEntry(code);
  return entry !== undefined && entry.usedAs.includes(use);
}

/**
 * Throws UncataloguedCodeError unless `code` is in the catalogue with `use` among its uses; returns
 * it typed. Call it where a code is set that a partner will read (a tenant's `lastErrorCode`, an
 * activation's blocking reason, an event's reason code), so a code outside the catalogue fails at
 * the place it is made, not in a partner's client.
 */
export function assertCatalogued(code: string, use: CodeUse): CatalogueCode {
  if (!isCataloguedAs(code, use)) throw new UncataloguedCodeError(code, use);
  return code;
}

/** The codes used as `use`. */
export function codesUsedAs(use: CodeUse): CatalogueCode[] {
  return (Object.keys(codeCatalogue) as CatalogueCode[]).filter((code) =>
    (codeCatalogue[code] as CodeEntry).usedAs.includes(use),
  );
}
