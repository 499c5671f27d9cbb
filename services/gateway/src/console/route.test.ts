import type { Context } from "koa";
import { describe, expect, it } from "vitest";
import { consoleCallOptions } from "./route.js";

const viewer = {
  userId: "usr_0123456789abcdef01234567",
  tenantId: "t1",
  email: "a@example.com",
  role: "admin",
} as const;
const contextOf = (method: string) =>
  ({ method, state: { requestId: "req_1", traceparent: undefined, idempotencyKey: undefined } }) as unknown as Context;

describe("consoleCallOptions", () => {
  it("attributes the call to the console user, and lets a page's read (GET), not a form's mutation, be repeated on another replica", () => {
    expect(consoleCallOptions(contextOf("GET"), viewer)).toMatchObject({
      requestId: "req_1",
      actor: "console:usr_0123456789abcdef01234567",
      repeatable: true,
    });
    expect(consoleCallOptions(contextOf("POST"), viewer)).toMatchObject({ repeatable: false });
  });
});
