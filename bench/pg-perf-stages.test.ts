import { describe, expect, it } from "vitest";
import { parsePerfScript, pgStageOf, pgStages, stageTableLines } from "./pg-perf-stages.js";

// `perf script -F pid,ip,sym` as perf prints it: a header line per sample, then its frames leaf
// first, one per line (tab-indented), "[unknown]" where perf found no name; a blank line between.
const SCRIPT = `  4101 
\t          5d8cf1 palloc
\t          331cc9 ExecInitModifyTable
\t          30b00b ExecInitNode
\t          304597 standard_ExecutorStart
\t          47f305 [unknown]
\t          4803ef PortalRun
\t          47dabf PostgresMain

  4101 
\t          2e1a40 stringToNode
\t          32faee ExecConstraints
\t          32f426 [unknown]
\t          330928 [unknown]
\t          303ed9 standard_ExecutorRun
\t          34074d SPI_execute_plan_with_paramlist
\t          14f8f [unknown]
\t          1c9292 plpgsql_exec_function
\t          1c937d plpgsql_call_handler
\t          30f61 ExecMakeTableFunctionResult
\t          303ed9 standard_ExecutorRun
\t          4803ef PortalRun
\t          47dabf PostgresMain

  4101 
\t          1c5f8f [unknown]
\t          1a2b3c ExecInitExprWithParams
\t          1c9292 plpgsql_exec_function
\t          1c937d plpgsql_call_handler
\t          303ed9 standard_ExecutorRun
\t          4803ef PortalRun
\t          47dabf PostgresMain

  4102 
\tffffffff81a0b2c0 iowrite16
\tffffffff81a0b000 virtqueue_notify
\t          e01a44 fdatasync
\t          dfc242 XLogFlush
\t          dfc000 [unknown]
\t          108d7c5 CommitTransactionCommand
\t          47dabf PostgresMain

  4102 
\t          4f1111 hash_search_with_hash_value
\t          4f2222 LockAcquireExtended
\t          4f3333 pg_advisory_lock_int8
\t          1c5f8f [unknown]
\t          1c9292 plpgsql_exec_function
\t          1c937d plpgsql_call_handler
`;

describe("Postgres CPU by stage (bench:notify's BENCH_PG_PERF)", () => {
  it("reads perf script's samples: the pid and the stack, leaf first", () => {
    const samples = parsePerfScript(SCRIPT);
    expect(samples.map((s) => s.pid)).toEqual([4101, 4101, 4101, 4102, 4102]);
    expect(samples[0]!.stack).toEqual([
      "palloc",
      "ExecInitModifyTable",
      "ExecInitNode",
      "standard_ExecutorStart",
      "[unknown]",
      "PortalRun",
      "PostgresMain",
    ]);
    expect(samples[4]!.stack).toHaveLength(6);
  });

  it("charges each sample to the stage nearest its leaf, passing through frames without a stage", () => {
    const [start, check, plpgsql, flush, advisory] = parsePerfScript(SCRIPT).map((s) => pgStageOf(s.stack));
    expect(start).toBe("executor start (plan to executable state)");
    // Inside a statement PL/pgSQL runs: the statement's stage, not PL/pgSQL's.
    expect(check).toBe("check constraints (parsed and compiled each statement)");
    // PL/pgSQL's own work (a simple expression set up anew in each transaction).
    expect(plpgsql).toBe("PL/pgSQL outside its statements (call setup, simple expressions, exception blocks)");
    expect(flush).toBe("commit: WAL flush (write, fdatasync)");
    expect(advisory).toBe("sequences (nextval, setval) and advisory locks");
    expect(pgStageOf(["[unknown]", "main"])).toBe("other (background work, unnamed frames)");
  });

  it("gives each stage its share of the samples", () => {
    const { samples, shares } = pgStages(parsePerfScript(SCRIPT));
    expect(samples).toBe(5);
    expect(shares.get("executor start (plan to executable state)")).toBeCloseTo(0.2, 10);
    expect([...shares.values()].reduce((a, b) => a + b, 0)).toBeCloseTo(1, 10);
  });

  it("tables each stage's ms per send by column, in the order of the first column's largest, then the total", () => {
    const lines = stageTableLines([
      {
        label: "ours",
        msPerSend: 2,
        shares: new Map([
          ["b", 0.25],
          ["a", 0.75],
        ]),
      },
      {
        label: "floor",
        msPerSend: 1,
        shares: new Map([
          ["a", 0.5],
          ["c", 0.5],
        ]),
      },
    ]);
    expect(lines.map((line) => line.trim().split(/\s+/))).toEqual([
      ["stage", "ours", "floor"],
      ["a", "1.500", "0.500"],
      ["b", "0.500", "0.000"],
      ["c", "0.000", "0.500"],
      ["total", "(/proc)", "2.000", "1.000"],
    ]);
  });
});
