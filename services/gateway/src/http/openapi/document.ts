import type { Route } from "../route.js";
import { documentContact, documentLicense } from "./response-headers.js";

/** What a served document says besides its operations. */
export interface DocumentFrame<R extends Route> {
  title: string;
  version: string;
  description: string;
  /** The server URL; every row's path starts with it. */
  server: string;
  /** The document-wide security requirement, when every operation has the same. */
  security?: object[];
  tags: { name: string; description?: string }[];
  /** The surface's operation builder (catalog-operation.ts, tenant-operation.ts). */
  operation(route: R): object;
  headers: Record<string, unknown>;
  schemas: Record<string, unknown>;
}

/** koa-router `/api/v1/tenants/:tenantId/x` -> OpenAPI `/tenants/{tenantId}/x` under server /api/v1. */
const openApiPath = (server: string, path: string) => path.slice(server.length).replace(/:([A-Za-z]+)/g, "{$1}");

function pathsOf<R extends Route>(routes: readonly R[], frame: DocumentFrame<R>) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    (paths[openApiPath(frame.server, route.path)] ??= {})[route.method.toLowerCase()] = frame.operation(route);
  }
  return paths;
}

/** An OpenAPI 3.1 document built from route rows: one operation per row, in table order. */
export function openApiDocument<R extends Route>(routes: readonly R[], frame: DocumentFrame<R>) {
  return {
    openapi: "3.1.0",
    info: {
      title: frame.title,
      version: frame.version,
      description: frame.description,
      contact: documentContact,
      license: documentLicense,
    },
    servers: [{ url: frame.server }],
    ...(frame.security ? { security: frame.security } : {}),
    tags: frame.tags,
    paths: pathsOf(routes, frame),
    components: {
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } },
      headers: frame.headers,
      schemas: frame.schemas,
    },
  };
}
