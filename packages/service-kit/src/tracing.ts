import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Span,
  type SpanContext,
  type Tracer,
} from "@opentelemetry/api";
import type { Logger } from "pino";
import { z } from "zod";

export { SpanKind, SpanStatusCode, type Span, type Tracer } from "@opentelemetry/api";

/** The gRPC metadata key and NATS header that carry the W3C trace context between processes. */
export const TRACEPARENT = "traceparent";

/**
 * The OpenTelemetry settings every process reads (the standard OTEL_* names). Without
 * OTEL_EXPORTER_OTLP_ENDPOINT no SDK is loaded: spans are OpenTelemetry's no-op spans, and an
 * incoming traceparent still passes through unchanged to the next hop.
 */
export const tracingSettings = {
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .string()
    .optional()
    .transform((v) => (v === "" ? undefined : v))
    .refine((v) => v === undefined || /^https?:\/\/[^\s]+$/.test(v), "must be an http:// or https:// URL"),
  OTEL_TRACES_SAMPLER: z
    .enum([
      "always_on",
      "always_off",
      "traceidratio",
      "parentbased_always_on",
      "parentbased_always_off",
      "parentbased_traceidratio",
    ])
    .default("parentbased_always_on"),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(1),
  /** The resource's `service.name` instead of the service's own name. */
  OTEL_SERVICE_NAME: z
    .string()
    .optional()
    .transform((v) => (v === "" ? undefined : v)),
};

export interface TracingConfig {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_TRACES_SAMPLER: z.infer<typeof tracingSettings.OTEL_TRACES_SAMPLER>;
  OTEL_TRACES_SAMPLER_ARG: number;
  OTEL_SERVICE_NAME?: string | undefined;
}

export interface Tracing {
  tracer: Tracer;
  /** True when spans are recorded and exported (OTEL_EXPORTER_OTLP_ENDPOINT set). */
  enabled: boolean;
  /** Exports what is buffered and stops; a no-op when tracing is off. */
  shutdown(): Promise<void>;
}

/** Tracing that records nothing: OpenTelemetry's no-op tracer (no SDK loaded). */
export const noTracing: Tracing = {
  tracer: trace.getTracerProvider().getTracer("noop"),
  enabled: false,
  shutdown: () => Promise.resolve(),
};

/**
 * Starts tracing for one process: when OTEL_EXPORTER_OTLP_ENDPOINT is set, an SDK tracer
 * provider (resource `service.name`, the configured sampler) batching spans to the OTLP/HTTP
 * exporter, which reads the other standard OTEL_EXPORTER_OTLP_* variables itself. The SDK
 * modules are imported only then, so a process without tracing does not load them.
 */
export async function startTracing(service: string, config: TracingConfig): Promise<Tracing> {
  if (!config.OTEL_EXPORTER_OTLP_ENDPOINT) return noTracing;
  const [{ BasicTracerProvider, BatchSpanProcessor, ...samplers }, { OTLPTraceExporter }, { resourceFromAttributes }] =
    await Promise.all([
      import("@opentelemetry/sdk-trace-base"),
      import("@opentelemetry/exporter-trace-otlp-http"),
      import("@opentelemetry/resources"),
    ]);
  const ratio = new samplers.TraceIdRatioBasedSampler(config.OTEL_TRACES_SAMPLER_ARG);
  const sampler = {
    always_on: new samplers.AlwaysOnSampler(),
    always_off: new samplers.AlwaysOffSampler(),
    traceidratio: ratio,
    parentbased_always_on: new samplers.ParentBasedSampler({ root: new samplers.AlwaysOnSampler() }),
    parentbased_always_off: new samplers.ParentBasedSampler({ root: new samplers.AlwaysOffSampler() }),
    parentbased_traceidratio: new samplers.ParentBasedSampler({ root: ratio }),
  }[config.OTEL_TRACES_SAMPLER];
  const endpoint = config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, "");
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": config.OTEL_SERVICE_NAME ?? service }),
    sampler,
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }), { scheduledDelayMillis: 500 }),
    ],
  });
  return {
    tracer: provider.getTracer(service),
    enabled: true,
    shutdown: () => provider.shutdown(),
  };
}

const TRACEPARENT_SYNTAX = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * A W3C traceparent header as a remote span context, or undefined when it is unsafe to continue:
 * wrong syntax, version ff, extra fields on version 00, or an all-zero trace or span id.
 */
export function parseTraceparent(header: string | undefined): SpanContext | undefined {
  if (header === undefined || header.length > 512) return undefined;
  const match = TRACEPARENT_SYNTAX.exec(header.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, traceFlags: parseInt(flags, 16) & TraceFlags.SAMPLED, isRemote: true };
}

/** The traceparent header of a span (version 00), or undefined for a span without a valid context. */
export function traceparentOf(span: Span | undefined): string | undefined {
  const context = span?.spanContext();
  if (!context || !trace.isSpanContextValid(context)) return undefined;
  return `00-${context.traceId}-${context.spanId}-0${(context.traceFlags & TraceFlags.SAMPLED).toString(16)}`;
}

/** The trace id of a traceparent, for log lines (`trace_id`); undefined when there is none. */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  return parseTraceparent(traceparent)?.traceId;
}

/**
 * The logger for the lines written while handling one traced thing outside an HTTP request (an
 * event's fan-out, a delivery attempt, a projected event, a relayed outbox row): `logger` with
 * `trace_id` bound, or `logger` itself when there is no trace context (tracing off and nothing
 * incoming). Bound once where the span starts, so every line of that work carries it; a pino child
 * formats nothing until a line is written at an enabled level.
 */
export function withTraceId(logger: Logger, traceparent: string | undefined): Logger {
  const traceId = traceIdOf(traceparent);
  return traceId ? logger.child({ trace_id: traceId }) : logger;
}

/**
 * Starts a span as the child of a traceparent (or of nothing: a new trace). With the no-op tracer
 * the span carries the parent's context unchanged, so traceparentOf(span) passes it on.
 */
export function startSpan(
  tracer: Tracer,
  name: string,
  parent: string | undefined,
  options: { kind?: SpanKind; attributes?: Attributes } = {},
): Span {
  const remote = parseTraceparent(parent);
  const context = remote ? trace.setSpanContext(ROOT_CONTEXT, remote) : ROOT_CONTEXT;
  return tracer.startSpan(name, options, context);
}

/** Runs work inside a child span of `parent`, ending it with the outcome (error status on a throw). */
export async function inSpan<T>(
  tracer: Tracer,
  name: string,
  parent: string | undefined,
  options: { kind?: SpanKind; attributes?: Attributes },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const span = startSpan(tracer, name, parent, options);
  try {
    return await work(span);
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).name });
    throw error;
  } finally {
    span.end();
  }
}
