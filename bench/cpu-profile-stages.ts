/**
 * node bench/dist/cpu-profile-stages.js <file.cpuprofile>... — where a process's busy CPU went, by
 * stage of the send (issue 33): each sample's stack is read from the leaf up and charged to the
 * first frame a stage claims (our files by path, and the few libraries that are a stage of their
 * own: pino is logging, OpenTelemetry tracing, prom-client metrics, zod validation). Frames of the
 * transports (pg, grpc-js, nats, node's streams and sockets) claim nothing, so a socket write is
 * charged to the code of ours that asked for it (a Postgres write to the statement's caller); a
 * sample with no claiming frame (a reply being parsed in a socket's data handler, the collector)
 * is charged to the first library from its leaf up, else to the runtime part at its leaf. Shares are of busy (non-idle) samples; multiplied by the
 * bench's CPU ms per send they give each stage's ms per send (docs/operations.md).
 *
 * Profiles come from `BENCH_CPU_PROF=<dir> npm run bench:notify` (bench/cpu-profile.ts).
 *
 * A V8 profile's sampler is wall-clock: a process that is runnable but waiting for a core is
 * charged to what it was doing when it lost the core, on a busy machine mostly a socket write
 * (the write wakes the peer, which takes the core). Its shares are of wall time, not CPU; for
 * CPU shares read the same stages from `perf` (BENCH_NODE_PERF, bench/node-perf-stages.ts).
 */
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const repoUrl = pathToFileURL(join(import.meta.dirname, "..", "..")).href + "/";

/** Stages, first match from the leaf up wins; tested against `<repo-relative url>#<function>`. */
const STAGES: [stage: string, pattern: RegExp][] = [
  // Libraries that are a stage wherever they are called from.
  [
    "logging",
    /\/node_modules\/(pino|pino-std-serializers|sonic-boom|fast-redact|thread-stream)\/|service-kit\/dist\/src\/logger\.js/,
  ],
  ["tracing", /\/node_modules\/@opentelemetry\/|service-kit\/dist\/src\/tracing\.js/],
  [
    "metrics",
    /\/node_modules\/prom-client\/|http-metrics\.js|notification-metrics\.js|service-kit\/dist\/src\/(metrics|pool-metrics|consumer-metrics)\.js/,
  ],
  ["validation (zod)", /\/node_modules\/zod\//],
  // The gateway's edge.
  [
    "gw: key lookup + authorization",
    /gateway\/dist\/src\/(http\/middleware\/(authenticate|authorize)|domain\/api-key|db\/api-key)/,
  ],
  ["gw: fleet rate limit", /gateway\/dist\/src\/(http\/middleware\/rate-limit|domain\/rate-limit|db\/rate-limit)/],
  ["gw: idempotency key", /gateway\/dist\/src\/http\/middleware\/idempotency-key/],
  [
    "gw: body parsing",
    /gateway\/dist\/src\/http\/middleware\/(json-body|unicode-text)|\/node_modules\/(raw-body|co-body|iconv-lite)\//,
  ],
  ["gw: request id + trace context", /gateway\/dist\/src\/http\/middleware\/(request-id|trace-context)/],
  [
    "gw: route handler + problem details",
    /gateway\/dist\/src\/(routes|http\/(problem|api-error|route|request-shape|catalog-error))/,
  ],
  [
    "gw: router + koa",
    /gateway\/dist\/src\/(app|http\/router)\.js|\/node_modules\/(koa|@koa\/router|koa-compose|delegates|on-finished|ee-first|statuses|type-is|mime-types|content-type|accepts|negotiator|vary|encodeurl|escape-html|only|cookies|http-errors|depd)\//,
  ],
  ["gw: gRPC client call", /gateway\/dist\/src\/grpc\/|service-kit\/dist\/src\/grpc-client/],
  // notify's send.
  ["notify: record + complete statements", /notify\/dist\/src\/db\/notification-store\.js/],
  [
    "notify: channel route (lookup, token)",
    /notify\/dist\/src\/(channel\/number-check|db\/channel-repository|domain\/channel)\.js|secret-box\.js/,
  ],
  ["notify: pacing", /notify\/dist\/src\/domain\/pacing\.js/],
  [
    "notify: validation + rendering",
    /notify\/dist\/src\/domain\/(notification|send-preconditions|testing-allowance)\.js|service-kit\/dist\/src\/idempotency\.js/,
  ],
  ["notify: provider (sandbox)", /notify\/dist\/src\/channel\/sandbox-channel\.js/],
  ["notify: send handler", /notify\/dist\/src\/grpc\/notification-service\.js/],
  [
    "outbox relay",
    /service-kit\/dist\/src\/outbox(-relay)?\.js|notify\/dist\/src\/db\/event-outbox\.js|service-kit\/dist\/src\/event-bus\.js/,
  ],
  ["projector", /notify\/dist\/src\/(events\/|db\/projection-store)/],
  ["provider-callback pass", /notify\/dist\/src\/(callbacks|db\/provider-callback-store)/],
  ["gRPC server (service-kit)", /service-kit\/dist\/src\/grpc-server/],
  // The floors' own code.
  ["floor: handler", /bench\/dist\/notify-floor/],
];

/** Where a sample no stage claims goes: the transport (or runtime part) at its leaf. */
function transportOf(url: string, functionName: string): string {
  if (functionName === "(garbage collector)") return "garbage collector";
  if (functionName === "(program)") return "(program: V8 and libuv outside JS)";
  const modules = url.lastIndexOf("/node_modules/");
  if (modules >= 0) {
    const [scope, name] = url.slice(modules + 14).split("/");
    const pkg = scope?.startsWith("@") ? `${scope}/${name ?? ""}` : (scope ?? "?");
    if (/^(pg|pg-protocol|pg-pool|pg-types|postgres-|knex|tarn)/.test(pkg)) return "unclaimed: Postgres driver";
    if (/^(@grpc|@bufbuild|protobufjs)/.test(pkg)) return "unclaimed: gRPC + protobuf";
    if (pkg === "nats") return "unclaimed: NATS client";
    if (
      /^(koa|@koa|koa-compose|delegates|on-finished|ee-first|raw-body|iconv-lite|statuses|http-errors|depd|type-is|mime-types|content-type|accepts|negotiator|vary|cookies|only|encodeurl|escape-html)$/.test(
        pkg,
      )
    )
      return "unclaimed: HTTP server + koa";
    return `unclaimed: ${pkg}`;
  }
  if (url.startsWith("node:internal/http2") || url.startsWith("node:http2")) return "unclaimed: gRPC + protobuf";
  if (url.startsWith("node:_http") || url.startsWith("node:http")) return "unclaimed: HTTP server + koa";
  return "unclaimed: node runtime";
}

/** One frame of a stack: its script's URL ("" for native code) and its function's name. */
export interface Frame {
  url: string;
  functionName: string;
}

/**
 * The stage of one sample, from its frames leaf first: the first frame a stage claims; unclaimed,
 * the first library from the leaf up (a socket write's pg, grpc-js or koa), else the runtime part
 * at the leaf (the first frame with a script, or a V8 pseudo-frame such as "(program)").
 */
export function stageOfFrames(frames: readonly Frame[]): string {
  let library: Frame | undefined;
  let leafPart: Frame | undefined;
  for (const frame of frames) {
    const { url, functionName } = frame;
    const where = `${url.replace(repoUrl, "")}#${functionName}`;
    const claimed = STAGES.find(([, pattern]) => pattern.test(where));
    if (claimed) return claimed[0];
    if (!library && url.includes("/node_modules/")) library = frame;
    if (!leafPart && (url !== "" || functionName.startsWith("("))) leafPart = frame;
  }
  const part = library ?? leafPart;
  return part ? transportOf(part.url, part.functionName) : "unclaimed: native";
}

export function stagesOf(file: string): { busyUs: number; stages: Map<string, number> } {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const stageOf = (leaf: number): string => {
    const frames: Frame[] = [];
    for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) frames.push(byId.get(id)!.callFrame);
    return stageOfFrames(frames);
  };
  const stages = new Map<string, number>();
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    if (byId.get(id)!.callFrame.functionName === "(idle)") continue;
    busyUs += us;
    const stage = stageOf(id);
    stages.set(stage, (stages.get(stage) ?? 0) + us);
  }
  return { busyUs, stages };
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  // `--per-send <ms>`: also print each stage's ms per send (the bench's CPU ms per send of the process).
  const args = process.argv.slice(2);
  let perSendMs: number | undefined;
  for (const file of args) {
    if (file === "--per-send") continue;
    if (args[args.indexOf(file) - 1] === "--per-send") {
      perSendMs = Number(file);
      continue;
    }
    const { busyUs, stages } = stagesOf(file);
    console.log(`\n== ${basename(file)}: ${(busyUs / 1e6).toFixed(2)} s busy CPU`);
    for (const [stage, us] of [...stages].sort((a, b) => b[1] - a[1])) {
      const share = us / busyUs;
      const ms = perSendMs === undefined ? "" : `  ${(share * perSendMs).toFixed(3)} ms/send`;
      console.log(`${(share * 100).toFixed(1).padStart(5)}%${ms}  ${stage}`);
    }
  }
}
