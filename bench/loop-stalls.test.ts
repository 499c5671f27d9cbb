import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { readLoopEvents, recordLoopStalls, summariseLoopEvents, type LoopEvent } from "./loop-stalls.js";

const busy = (ms: number) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // the event loop held
  }
};

describe("loop stalls (bench:notify's BENCH_LOOP_STALLS)", () => {
  it("records a blocked event loop as one stall of about the time it was held, and nothing while it runs free", async () => {
    const events: LoopEvent[] = [];
    const stop = recordLoopStalls("here", (e) => events.push(e));
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Free, nothing near the block's size (a busy machine may still delay a tick by 20 ms or so).
    const long = (e: LoopEvent) => e.what === "stall" && e.ms >= 100;
    expect(events.filter(long)).toEqual([]);
    const from = Date.now();
    busy(150);
    await new Promise((resolve) => setTimeout(resolve, 50));
    stop();
    // Held 150 ms: one stall of 140 ms and more (the tick's own 10 ms not counted).
    const stalls = events.filter(long);
    expect(stalls).toHaveLength(1);
    expect(stalls[0]!.ms).toBeGreaterThanOrEqual(130);
    expect(stalls[0]!.at).toBeGreaterThanOrEqual(from + 150);
    expect(summariseLoopEvents(events, from, Date.now())).toMatch(/^here: \d+ stalls \(\d+ ms, largest \d{3,}\)/);
  });

  it("a preloaded process appends its stalls to the directory, read back by process name", () => {
    const dir = mkdtempSync(join(tmpdir(), "stalls-"));
    try {
      execFileSync(
        process.execPath,
        [
          `--import=${join(import.meta.dirname, "dist", "loop-stalls.js")}`,
          "-e",
          "setTimeout(() => { const end = Date.now() + 80; while (Date.now() < end); setTimeout(() => {}, 30); }, 50)",
        ],
        { env: { ...process.env, BENCH_LOOP_STALLS: dir, BENCH_LOOP_STALLS_CHILD: "1" } },
      );
      const stalls = readLoopEvents(dir).filter((e) => e.what === "stall" && e.ms >= 60);
      expect(stalls).toHaveLength(1);
      expect(stalls[0]!.process).toBe("node");
      expect(stalls[0]!.ms).toBeGreaterThanOrEqual(60);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("writes a heap line each second: every scavenge of that second and the young generation's size", () => {
    const dir = mkdtempSync(join(tmpdir(), "stalls-"));
    try {
      execFileSync(
        process.execPath,
        [
          `--import=${join(import.meta.dirname, "dist", "loop-stalls.js")}`,
          "-e",
          // Short-lived garbage for 1.5 s: scavenges, none of them long.
          "const end = Date.now() + 1500; const t = setInterval(() => { for (let i = 0; i < 2e4; i++) ({ i, s: 'x' + i }); if (Date.now() > end) clearInterval(t); }, 5)",
        ],
        { env: { ...process.env, BENCH_LOOP_STALLS: dir, BENCH_LOOP_STALLS_CHILD: "1" } },
      );
      const heap = readLoopEvents(dir).filter((e) => e.what === "heap");
      expect(heap.length).toBeGreaterThanOrEqual(1);
      expect(heap[0]!.minor).toBeGreaterThan(0);
      expect(heap[0]!.youngKb).toBeGreaterThan(0);
      const from = heap[0]!.at - 1;
      expect(summariseLoopEvents(heap, from, heap.at(-1)!.at)).toMatch(
        /^node: 0 stalls .* all collections: [1-9]\d* scavenges \(\d+ ms\), \d+ others \(\d+ ms\), young generation \d+ -> \d+ KB$/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
