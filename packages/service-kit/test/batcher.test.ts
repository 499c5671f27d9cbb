import { describe, expect, it } from "vitest";
import { createBatcher } from "../src/batcher.js";

/** A batcher whose batches wait until the test lets them finish, recording what each held. */
function controlled(maxBatch: number, maxInFlight: number) {
  const batches: number[][] = [];
  const finish: Array<() => void> = [];
  const call = createBatcher<number, string>({
    maxBatch,
    maxInFlight,
    run(items) {
      batches.push(items);
      return new Promise((resolve) =>
        finish.push(() => resolve(items.map((item) => (item < 0 ? new Error(`refused ${item}`) : `done ${item}`)))),
      );
    },
  });
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  return { call, batches, finish, turn };
}

describe("createBatcher", () => {
  it("sends the calls of one turn together at once, and the calls made while a batch runs together after it", async () => {
    const { call, batches, finish, turn } = controlled(32, 1);
    const first = [call(1), call(2)];
    await turn();
    expect(batches).toEqual([[1, 2]]);
    const second = [call(3), call(4)];
    await turn();
    const third = call(5);
    await turn();
    // One batch at a time: 3, 4 and 5 wait for the first, then go as one.
    expect(batches).toEqual([[1, 2]]);
    finish.shift()!();
    expect(await Promise.all(first)).toEqual(["done 1", "done 2"]);
    await turn();
    expect(batches).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
    finish.shift()!();
    expect(await Promise.all([...second, third])).toEqual(["done 3", "done 4", "done 5"]);
  });

  it("holds at most maxBatch calls in a batch and runs up to maxInFlight batches at once", async () => {
    const { call, batches, finish, turn } = controlled(2, 2);
    const answers = Promise.all([1, 2, 3, 4, 5].map((n) => call(n)));
    await turn();
    expect(batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
    finish.shift()!();
    await turn();
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
    finish.splice(0).forEach((done) => done());
    expect(await answers).toEqual(["done 1", "done 2", "done 3", "done 4", "done 5"]);
  });

  it("rejects only the call its batch answered with an Error, and every call of a batch that threw", async () => {
    const { call, finish, turn } = controlled(32, 1);
    const mixed = [call(1), call(-2), call(3)].map((p) => p.catch((error: Error) => error.message));
    await turn();
    finish.shift()!();
    expect(await Promise.all(mixed)).toEqual(["done 1", "refused -2", "done 3"]);

    const failing = createBatcher<number, string>({
      maxBatch: 32,
      maxInFlight: 1,
      run: () => Promise.reject(new Error("statement failed")),
    });
    const all = await Promise.all([failing(1), failing(2)].map((p) => p.catch((error: Error) => error.message)));
    expect(all).toEqual(["statement failed", "statement failed"]);
    // And it goes on: the next call is run.
    await expect(failing(3)).rejects.toThrow("statement failed");
  });

  it("tells the size of every batch that goes out", async () => {
    const sizes: number[] = [];
    const call = createBatcher<number, number>({
      maxBatch: 3,
      maxInFlight: 1,
      run: (items) => Promise.resolve(items),
      onBatch: (size) => sizes.push(size),
    });
    expect(await Promise.all([1, 2, 3, 4].map((n) => call(n)))).toEqual([1, 2, 3, 4]);
    expect(sizes).toEqual([3, 1]);
  });
});
