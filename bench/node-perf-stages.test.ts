import { describe, expect, it } from "vitest";
import { frameOfSymbol, nodeStageOf, nodeStages } from "./node-perf-stages.js";
import { parsePerfScript } from "./pg-perf-stages.js";

// `perf script -F pid,ip,sym` of Node processes' recordings after `perf inject --jit`: JS frames
// named from V8's jitdump (`JS:<tier><name> <script>:<line>:<col>`), native frames by symbol.
const SCRIPT = `  700 
\tffffffff8225a8a0 tcp_sendmsg
\tffffffff8225a8a0 __sys_sendto
\t          108cae writev
\t         1a2b3c3 node::LibuvStreamWrap::DoTryWrite(uv_buf_t**, unsigned long*)
\t    7fe7bb00f100 JS:*writevGeneric node:internal/stream_base_commons:120:22
\t    7fe7bb00f200 JS:*submit /work/main/node_modules/pg/lib/query.js:151:9
\t    7fe7bb00f300 JS:*record file:///work/main/services/notify/dist/src/db/notification-store.js:51:15
\t    7fe7bb00f400 JS:~dispatch file:///work/main/services/notify/dist/src/grpc/notification-service.js:82:3

  700 
\t         1a2b3c3 v8::internal::Scavenger::ScavengeObject<v8::internal::FullHeapObjectSlot>(v8::internal::FullHeapObjectSlot, v8::internal::Tagged<v8::internal::HeapObject>)
\t         1a2b3c4 v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace, v8::internal::GarbageCollectionReason, v8::GCCallbackFlags)
\t    7fe7bb00f500 JS:^parse /work/main/node_modules/pg-protocol/dist/parser.js:25:10

  700 
\t    7fe7bb00f600 JS:*addFields /work/main/node_modules/pg/lib/result.js:81:12
\t    7fe7bb00f700 JS:~ /work/main/node_modules/pg/lib/connection.js:137:30

  700 
\t         1a2b3c5 uv__io_poll
\t         1a2b3c6 uv_run

  701 
\t         1a2b3c7 Builtins_KeyedLoadIC_Megamorphic
\t    7fe7bb00f800 JS:+readJsonBody file:///work/main/services/gateway/dist/src/http/middleware/json-body.js:14:8
`;

describe("our processes' CPU by stage (bench:notify's BENCH_NODE_PERF)", () => {
  it("reads a JS frame's function and script from the symbol V8 gives its code", () => {
    expect(frameOfSymbol("JS:*record file:///work/main/x/notification-store.js:51:15")).toEqual({
      url: "file:///work/main/x/notification-store.js",
      functionName: "record",
    });
    // Anonymous: no name before the script.
    expect(frameOfSymbol("JS:~ /work/main/node_modules/pg/lib/connection.js:137:30")).toEqual({
      url: "/work/main/node_modules/pg/lib/connection.js",
      functionName: "",
    });
    expect(frameOfSymbol("JS:*get size node:internal/streams/writable:12:3")).toEqual({
      url: "node:internal/streams/writable",
      functionName: "get size",
    });
    // Native code has no script.
    expect(frameOfSymbol("uv__io_poll")).toEqual({ url: "", functionName: "uv__io_poll" });
    expect(frameOfSymbol("RegExp:^a+$")).toEqual({ url: "", functionName: "RegExp:^a+$" });
  });

  it("charges a sample as a V8 profile's: the code of ours that asked, the collector, the transport, (program)", () => {
    const [write, collection, reply, poll, edge] = parsePerfScript(SCRIPT).map((s) => nodeStageOf(s.stack));
    // A socket write in the kernel, under pg, under notify's statement: the statement's stage.
    expect(write).toBe("notify: record + complete statements");
    // A scavenge on an allocation of pg's parser: the collector's.
    expect(collection).toBe("garbage collector");
    // A reply parsed in pg's data handler, with no caller of ours: the driver.
    expect(reply).toBe("unclaimed: Postgres driver");
    // libuv without any JS frame.
    expect(poll).toBe("(program: V8 and libuv outside JS)");
    // A V8 builtin at the leaf of the gateway's body parsing: the body parsing.
    expect(edge).toBe("gw: body parsing");
  });

  it("gives each stage its share of one process's samples, and only that process's", () => {
    const samples = parsePerfScript(SCRIPT);
    const shares = nodeStages(samples, 700);
    expect(shares.get("notify: record + complete statements")).toBeCloseTo(0.25, 10);
    expect(shares.has("gw: body parsing")).toBe(false);
    expect([...shares.values()].reduce((a, b) => a + b, 0)).toBeCloseTo(1, 10);
    expect(nodeStages(samples, 701)).toEqual(new Map([["gw: body parsing", 1]]));
  });
});
