import { describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "./config.js";
import {
  noTracing,
  parseTraceparent,
  startSpan,
  startTracing,
  traceIdOf,
  traceparentOf,
  tracingSettings,
  withTraceId,
} from "./tracing.js";
import { createLogger } from "./logger.js";

const valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("parseTraceparent", () => {
  it("takes a valid W3C traceparent, sampled or not, and a later version with extra fields", () => {
    expect(parseTraceparent(valid)).toEqual({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      traceFlags: 1,
      isRemote: true,
    });
    expect(parseTraceparent(valid.replace(/01$/, "00"))?.traceFlags).toBe(0);
    expect(parseTraceparent(`01${valid.slice(2)}-future`)?.traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
  });

  it.each([
    ["absent", undefined],
    ["empty", ""],
    ["all-zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"],
    ["all-zero span id", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"],
    ["upper case", valid.toUpperCase()],
    ["version ff", `ff${valid.slice(2)}`],
    ["extra fields on version 00", `${valid}-x`],
    ["short trace id", "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01"],
    ["a log-injection attempt", `${valid}\n{"level":"error"}`],
    ["too long", `01${valid.slice(2)}-${"a".repeat(600)}`],
  ])("refuses %s", (_label, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });
});

describe("tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)", () => {
  const off = loadConfig(z.object(tracingSettings), {});

  it("loads no SDK: startTracing answers the no-op tracing", async () => {
    expect(off).toEqual({
      OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
      OTEL_TRACES_SAMPLER: "parentbased_always_on",
      OTEL_TRACES_SAMPLER_ARG: 1,
    });
    expect(await startTracing("test", off)).toBe(noTracing);
    expect(await startTracing("test", { ...off, OTEL_EXPORTER_OTLP_ENDPOINT: "" })).toBe(noTracing);
  });

  it("passes an incoming traceparent through unchanged, and starts nothing without one", () => {
    const span = startSpan(noTracing.tracer, "x", valid);
    expect(span.isRecording()).toBe(false);
    expect(traceparentOf(span)).toBe(valid);
    expect(traceIdOf(traceparentOf(span))).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(traceparentOf(startSpan(noTracing.tracer, "x", undefined))).toBeUndefined();
    expect(traceparentOf(startSpan(noTracing.tracer, "x", "00-garbage"))).toBeUndefined();
  });
});

describe("tracing on", () => {
  it("records child spans of the incoming context, with new span ids and the same trace id", async () => {
    // Nothing listens on port 9: the exporter's failures are its own; no span is exported here.
    const tracing = await startTracing("test", {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
      OTEL_TRACES_SAMPLER: "parentbased_always_on",
      OTEL_TRACES_SAMPLER_ARG: 1,
    });
    try {
      expect(tracing.enabled).toBe(true);
      const span = startSpan(tracing.tracer, "x", valid);
      expect(span.isRecording()).toBe(true);
      const context = parseTraceparent(traceparentOf(span))!;
      expect(context.traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
      expect(context.spanId).not.toBe("00f067aa0ba902b7");
      const root = startSpan(tracing.tracer, "root", undefined);
      expect(traceparentOf(root)).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      // parentbased: an unsampled caller's trace stays unsampled.
      expect(startSpan(tracing.tracer, "x", valid.replace(/01$/, "00")).isRecording()).toBe(false);
    } finally {
      await tracing.shutdown();
    }
  });

  it("refuses an endpoint that is not an http(s) URL and a sampler it does not know", () => {
    expect(() => loadConfig(z.object(tracingSettings), { OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow(
      "OTEL_EXPORTER_OTLP_ENDPOINT",
    );
    expect(() => loadConfig(z.object(tracingSettings), { OTEL_TRACES_SAMPLER: "sometimes" })).toThrow(
      "OTEL_TRACES_SAMPLER",
    );
  });
});

describe("withTraceId", () => {
  it("binds trace_id to every line of the traced work, and leaves an untraced logger as it is", () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger("test", "debug", {
      write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>),
    });
    withTraceId(logger, valid).info({ eventId: "evt_1" }, "one");
    withTraceId(logger, valid).debug("two");
    expect(withTraceId(logger, undefined)).toBe(logger);
    expect(withTraceId(logger, "00-garbage")).toBe(logger);
    expect(lines.map((l) => [l.msg, l.trace_id])).toEqual([
      ["one", "4bf92f3577b34da6a3ce929d0e0e4736"],
      ["two", "4bf92f3577b34da6a3ce929d0e0e4736"],
    ]);
  });
});
