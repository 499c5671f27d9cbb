import Koa from "koa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveApp } from "../serve-app.testing.js";
import { OTHER_SUCCESS, type CatalogRoute, type RouteDeps } from "./route.js";
import { routerOf } from "./router.js";

/** A catalog row (no key or scope checks in front of its handler) with the given status and handler. */
function row(
  path: string,
  method: CatalogRoute["method"],
  handle: CatalogRoute["handle"],
  successStatus?: 201 | 202 | 204,
) {
  return {
    surface: "catalog",
    operationId: path,
    method,
    path,
    tag: "test",
    summary: "",
    description: "",
    successStatus,
    success: { description: "" },
    errors: { statuses: [] },
    handle,
  } satisfies CatalogRoute;
}

describe("routerOf: a row's successStatus is what the router sends", () => {
  let served: Awaited<ReturnType<typeof serveApp>>;
  beforeAll(async () => {
    const routes = [
      row(
        "/created",
        "POST",
        async (ctx) => {
          ctx.set("Location", "/created/1");
          ctx.body = { id: 1 };
          await Promise.resolve();
        },
        201,
      ),
      row(
        "/deleted",
        "DELETE",
        async () => {
          await Promise.resolve();
        },
        204,
      ),
      row("/plain", "GET", async (ctx) => {
        ctx.body = { ok: true };
        await Promise.resolve();
      }),
      row(
        "/other",
        "POST",
        async (ctx) => {
          ctx.body = {};
          await Promise.resolve();
          return OTHER_SUCCESS;
        },
        202,
      ),
    ];
    const app = new Koa();
    app.silent = true; // the 500 below is expected: Koa need not print it
    app.use(routerOf(routes, {} as RouteDeps).routes());
    served = await serveApp(app);
  });
  afterAll(() => served?.close());

  it("sends the row's status with the handler's body and headers", async () => {
    const response = await fetch(`${served.base}/created`, { method: "POST" });
    expect(response.status).toBe(201);
    expect(response.headers.get("location")).toBe("/created/1");
    expect(await response.json()).toEqual({ id: 1 });
  });

  it("sends 204 with no body for a row that declares it", async () => {
    const response = await fetch(`${served.base}/deleted`, { method: "DELETE" });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
  });

  it("sends 200 for a row that declares none", async () => {
    expect((await fetch(`${served.base}/plain`)).status).toBe(200);
  });

  it("refuses OTHER_SUCCESS from a row without otherSuccess (a programming error, a 500)", async () => {
    expect((await fetch(`${served.base}/other`, { method: "POST" })).status).toBe(500);
  });
});
