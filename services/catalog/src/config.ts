import { z } from "zod";
import {
  databaseServiceSettings,
  idempotencySettings,
  loadConfig,
  type Environment,
} from "@platform/service-kit/config";

const schema = z.object({
  ...databaseServiceSettings({ grpc: 50051, metrics: 9465 }),
  ...idempotencySettings,
});

export type CatalogConfig = z.infer<typeof schema>;
export const CATALOG_SCHEMA = "catalog";

export function loadCatalogConfig(environment: Environment): CatalogConfig {
  return loadConfig(schema, environment);
}
