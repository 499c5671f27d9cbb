/**
 * The two OpenAPI documents, as served with the default configuration, are committed under
 * services/gateway/openapi/: any change to the interface shows in review as a diff of those files.
 * After an intended change, `npx vitest run services/gateway/src/routes/documents.test.ts -u`
 * rewrites them; CI never writes them, so an unreviewed change fails here.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadGatewayConfig } from "../config.js";
import { TokenBuckets } from "../domain/token-buckets.js";
import { rateLimitPolicyHeader } from "../http/middleware/rate-limit.js";
import { catalogOpenApi, tenantOpenApi } from "./documents.js";

const committed = (file: string) => join(import.meta.dirname, "..", "..", "openapi", file);

describe("the OpenAPI documents", () => {
  const config = loadGatewayConfig({ DATABASE_URL: "postgres://127.0.0.1/unused" });
  const buckets = new TokenBuckets({
    ratePerSecond: config.RATE_LIMIT_PER_SECOND,
    burst: config.RATE_LIMIT_BURST,
  });
  const options = { rateLimitPolicy: rateLimitPolicyHeader(buckets) };

  it("serve /v1/openapi.json as committed in openapi/catalog-v1.json", async () => {
    await expect(JSON.stringify(catalogOpenApi(options), null, 2)).toMatchFileSnapshot(committed("catalog-v1.json"));
  });

  it("serve /api/v1/openapi.json as committed in openapi/tenant-v1.json", async () => {
    await expect(JSON.stringify(tenantOpenApi(options), null, 2)).toMatchFileSnapshot(committed("tenant-v1.json"));
  });
});
