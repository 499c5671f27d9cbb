import { describe, expect, it } from "vitest";
import { createEndpointSlots } from "./endpoint-slots.js";

describe("per-endpoint admission of delivery jobs", () => {
  it("runs up to the limit, queues as many more, refuses the rest, and hands queued jobs over in order", () => {
    const slots = createEndpointSlots<string>(2);
    expect(["a1", "a2", "a3", "a4", "a5"].map((job) => slots.admit("a", job))).toEqual([
      "run",
      "run",
      "wait",
      "wait",
      "refuse",
    ]);
    // Another endpoint is not affected by a's backlog.
    expect(slots.admit("b", "b1")).toBe("run");
    expect(slots.waiting).toBe(2);
    expect(slots.release("a")).toBe("a3");
    expect(slots.release("a")).toBe("a4");
    expect(slots.waiting).toBe(0);
    expect(slots.release("a")).toBeUndefined();
    expect(slots.release("a")).toBeUndefined();
    expect(slots.admit("a", "a6")).toBe("run");
    expect(slots.admit("a", "a7")).toBe("run");
    expect(slots.admit("a", "a8")).toBe("wait");
  });

  it("drains what waits (shutdown)", () => {
    const slots = createEndpointSlots<number>(1);
    slots.admit("a", 1);
    slots.admit("a", 2);
    slots.admit("b", 3);
    slots.admit("b", 4);
    expect(slots.drain().sort()).toEqual([2, 4]);
    expect(slots.waiting).toBe(0);
  });
});
