import { randomUUID } from "node:crypto";
import {
  Metadata,
  Server,
  ServerCredentials,
  status as Status,
  type handleUnaryCall,
  type ServerUnaryCall,
  type ServiceDefinition,
  type ServiceError,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import type { Logger } from "pino";
import { Counter, Histogram, type Registry } from "prom-client";
import { DomainError, type ErrorKind } from "./errors.js";
import { isTransientDatabaseError } from "./postgres.js";
import {
  noTracing,
  SpanKind,
  SpanStatusCode,
  startSpan,
  TRACEPARENT,
  traceparentOf,
  type Span,
  type Tracing,
} from "./tracing.js";

/** Metadata key that carries the partner-facing request id from the gateway to every service. */
export const REQUEST_ID_METADATA = "x-request-id";
/** Who asked for a call when a person did (the console: `console:<userId>`); see CallOptions.actor. */
export const ACTOR_METADATA = "x-actor";
/** Trailing metadata key that carries a DomainError's stable code back to the caller. */
export const ERROR_CODE_METADATA = "error-code";
/** Trailing metadata key that carries a DomainError's `retryAfterSeconds` (whole seconds, at least 1). */
export const RETRY_AFTER_METADATA = "retry-after";

/**
 * Options for every server and client: channelz (grpc-js's built-in call tracing, which costs
 * CPU on every call) is off; we trace with request ids, logs and Prometheus instead.
 */
export const GRPC_CHANNEL_OPTIONS = { "grpc.enable_channelz": 0 } as const;

/** What a handler gets besides its request: the request id and a logger already bound to it. */
export interface CallContext {
  requestId: string;
  logger: Logger;
  metadata: Metadata;
  /** This call's server span (a child of the caller's `traceparent` metadata; no-op when tracing is off). */
  span?: Span;
  /** The traceparent of this call's span, for what the handler passes on (outbox rows, provider spans). */
  traceparent?: string | undefined;
  /**
   * Who asked, when a person did: the caller's `x-actor` metadata (the console: `console:<userId>`)
   * when it is well-formed (1-128 of A-Z a-z 0-9 : _ . @ -); absent for API keys and operators.
   * For the handler to attribute the action (the activity feed); it is on the call's log lines.
   */
  actor?: string | undefined;
}

const ACTOR_PATTERN = /^[A-Za-z0-9:_.@-]{1,128}$/;

/**
 * A call's context. The request-scoped logger is made on first use (most calls never log at the
 * configured level), through a getter on the prototype: an accessor in an object literal, made per
 * call, turned every context into a slow dictionary-mode object (about 0.5 µs a call).
 */
class UnaryCallContext implements CallContext {
  #logger: Logger | undefined;
  constructor(
    readonly requestId: string,
    readonly metadata: Metadata,
    readonly span: Span,
    readonly traceparent: string | undefined,
    readonly actor: string | undefined,
    private readonly bindLogger: () => Logger,
  ) {}

  get logger(): Logger {
    return (this.#logger ??= this.bindLogger());
  }
}

interface MethodDefinitionLike {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  requestDeserialize(bytes: Buffer): unknown;
  responseSerialize(value: never): Buffer;
}

/** The generated service definition (ts-proto `XServiceService`). */
export type ServiceDefinitionLike = Record<string, MethodDefinitionLike>;

/** A service implementation: one async function per unary method, derived from the definition. */
export type UnaryHandlers<D extends ServiceDefinitionLike> = {
  [K in keyof D]: D[K] extends {
    requestDeserialize(bytes: Buffer): infer Req;
    responseSerialize(value: infer Res): Buffer;
  }
    ? (request: Req, context: CallContext) => Promise<Res>
    : never;
};

/** One table from domain error kinds to gRPC status codes. */
export const statusForErrorKind: Record<ErrorKind, Status> = {
  invalid_argument: Status.INVALID_ARGUMENT,
  not_found: Status.NOT_FOUND,
  already_exists: Status.ALREADY_EXISTS,
  conflict: Status.ABORTED,
  failed_precondition: Status.FAILED_PRECONDITION,
  permission_denied: Status.PERMISSION_DENIED,
  unauthenticated: Status.UNAUTHENTICATED,
  resource_exhausted: Status.RESOURCE_EXHAUSTED,
  unavailable: Status.UNAVAILABLE,
};

function serviceErrorFor(error: unknown, logger: Logger): Partial<ServiceError> {
  const metadata = new Metadata();
  if (error instanceof DomainError) {
    metadata.set(ERROR_CODE_METADATA, error.code);
    if (error.retryAfterSeconds !== undefined) {
      metadata.set(RETRY_AFTER_METADATA, String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
    }
    if (error.kind === "unavailable") logger.warn({ err: error }, error.message);
    return { code: statusForErrorKind[error.kind], details: error.message, metadata };
  }
  if (isTransientDatabaseError(error)) {
    logger.warn({ err: error }, "database unavailable");
    metadata.set(ERROR_CODE_METADATA, "service.unavailable");
    return { code: Status.UNAVAILABLE, details: "temporarily unavailable", metadata };
  }
  // Anything else is a bug: log the cause, send nothing of it.
  logger.error({ err: error }, "unhandled error");
  metadata.set(ERROR_CODE_METADATA, "internal");
  return { code: Status.INTERNAL, details: "internal error", metadata };
}

export interface GrpcInstrumentation {
  logger: Logger;
  handled: Counter<"grpc_service" | "grpc_method" | "grpc_code">;
  handlingSeconds: Histogram<"grpc_service" | "grpc_method" | "grpc_code">;
  inFlight: Set<Promise<unknown>>;
  tracing: Tracing;
}

export function createGrpcInstrumentation(
  logger: Logger,
  registry: Registry,
  tracing: Tracing = noTracing,
): GrpcInstrumentation {
  return {
    logger,
    tracing,
    handled: new Counter({
      name: "grpc_server_handled_total",
      help: "RPCs completed on the server, regardless of success or failure.",
      labelNames: ["grpc_service", "grpc_method", "grpc_code"],
      registers: [registry],
    }),
    handlingSeconds: new Histogram({
      name: "grpc_server_handling_seconds",
      help: "Time from receiving an RPC to sending its response, in seconds.",
      labelNames: ["grpc_service", "grpc_method", "grpc_code"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    inFlight: new Set(),
  };
}

/**
 * Turns async handlers into grpc-js unary handlers wrapped in the one interceptor every call
 * goes through: request id from metadata, a request-scoped logger, metrics, and the mapping of
 * thrown errors to gRPC status (DomainError -> its status and code; transient database failure ->
 * UNAVAILABLE; anything else -> opaque INTERNAL with the cause logged).
 */
export function instrumentService<D extends ServiceDefinitionLike>(
  definition: D,
  handlers: UnaryHandlers<D>,
  instrumentation: GrpcInstrumentation,
): UntypedServiceImplementation {
  const implementation: UntypedServiceImplementation = {};
  for (const [name, method] of Object.entries(definition)) {
    if (method.requestStream || method.responseStream) {
      throw new Error(`${method.path}: only unary methods are supported`);
    }
    const [, serviceName = "", methodName = name] = /^\/([^/]+)\/([^/]+)$/.exec(method.path) ?? [];
    const handler = handlers[name as keyof D] as unknown as (req: unknown, ctx: CallContext) => Promise<unknown>;
    const labelsByCode = new Map<Status, Record<"grpc_service" | "grpc_method" | "grpc_code", string>>();
    const unary: handleUnaryCall<unknown, unknown> = (call: ServerUnaryCall<unknown, unknown>, callback) => {
      const started = performance.now();
      const requestId = String(call.metadata.get(REQUEST_ID_METADATA)[0] ?? randomUUID());
      const parent = call.metadata.get(TRACEPARENT)[0];
      const span = startSpan(
        instrumentation.tracing.tracer,
        method.path,
        typeof parent === "string" ? parent : undefined,
        {
          kind: SpanKind.SERVER,
          attributes: { "rpc.system": "grpc", "rpc.service": serviceName, "rpc.method": methodName },
        },
      );
      const traceparent = traceparentOf(span);
      const presentedActor = call.metadata.get(ACTOR_METADATA)[0];
      const actor =
        typeof presentedActor === "string" && ACTOR_PATTERN.test(presentedActor) ? presentedActor : undefined;
      const context = new UnaryCallContext(requestId, call.metadata, span, traceparent, actor, () =>
        instrumentation.logger.child({
          requestId,
          grpcMethod: method.path,
          ...(traceparent ? { trace_id: span.spanContext().traceId } : {}),
          ...(actor ? { actor } : {}),
        }),
      );
      const work: Promise<void> = handler(call.request, context).then(
        (response) => {
          finish(Status.OK);
          callback(null, response);
        },
        (error: unknown) => {
          const serviceError = serviceErrorFor(error, context.logger);
          finish(serviceError.code ?? Status.INTERNAL);
          callback(serviceError);
        },
      );
      instrumentation.inFlight.add(work);
      function finish(code: Status) {
        instrumentation.inFlight.delete(work);
        span.setAttribute("rpc.grpc.status_code", code);
        if (code !== Status.OK) span.setStatus({ code: SpanStatusCode.ERROR, message: Status[code] });
        span.end();
        let labels = labelsByCode.get(code);
        if (!labels) {
          labels = { grpc_service: serviceName, grpc_method: methodName, grpc_code: Status[code] };
          labelsByCode.set(code, labels);
        }
        const milliseconds = performance.now() - started;
        instrumentation.handled.inc(labels);
        instrumentation.handlingSeconds.observe(labels, milliseconds / 1000);
        if (instrumentation.logger.isLevelEnabled("debug")) {
          context.logger.debug({ grpcCode: Status[code], durationMs: milliseconds }, "rpc handled");
        }
      }
    };
    implementation[name] = unary;
  }
  return implementation;
}

/** GRPC_MAX_CONNECTION_AGE's default: clients rebalance onto new processes within about this long. */
export const DEFAULT_MAX_CONNECTION_AGE_MS = 30_000;
/** GRPC_MAX_CONNECTION_AGE_GRACE's default. */
export const DEFAULT_MAX_CONNECTION_AGE_GRACE_MS = 10_000;

export interface GrpcServiceRegistration {
  definition: ServiceDefinitionLike;
  implementation: UntypedServiceImplementation;
}

export interface RunningGrpcServer {
  port: number;
  health: HealthImplementation;
  /** Marks every service NOT_SERVING (probes and balancers stop picking it) and goes on serving. */
  notServing(): void;
  /** Marks every service NOT_SERVING, lets in-flight calls finish (up to graceMs), then closes. */
  shutdown(graceMs: number): Promise<void>;
}

/**
 * Starts a grpc-js server with the given services plus `grpc.health.v1.Health`, where the
 * overall status ("") and each service name report SERVING once bound.
 */
export async function startGrpcServer(options: {
  host: string;
  port: number;
  services: GrpcServiceRegistration[];
  instrumentation: GrpcInstrumentation;
  /**
   * A connection older than this is told to go away (HTTP/2 GOAWAY), so a client reconnects,
   * re-resolves its target and balances over the processes there are now (default 30 s).
   */
  maxConnectionAgeMs?: number;
  /** How long calls on such a connection may still run before it is closed (default 10 s). */
  maxConnectionAgeGraceMs?: number;
}): Promise<RunningGrpcServer> {
  const server = new Server({
    ...GRPC_CHANNEL_OPTIONS,
    "grpc.max_receive_message_length": 4 * 1024 * 1024,
    "grpc.max_connection_age_ms": options.maxConnectionAgeMs ?? DEFAULT_MAX_CONNECTION_AGE_MS,
    "grpc.max_connection_age_grace_ms": options.maxConnectionAgeGraceMs ?? DEFAULT_MAX_CONNECTION_AGE_GRACE_MS,
  });
  const serviceNames = [""];
  for (const { definition, implementation } of options.services) {
    server.addService(definition as unknown as ServiceDefinition, implementation);
    const first = Object.values(definition)[0];
    if (first) serviceNames.push(first.path.split("/")[1]!);
  }
  const health = new HealthImplementation(Object.fromEntries(serviceNames.map((n) => [n, "NOT_SERVING"])));
  health.addToServer(server);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${options.host}:${options.port}`, ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    );
  });
  for (const name of serviceNames) health.setStatus(name, "SERVING");
  const notServing = () => {
    for (const name of serviceNames) health.setStatus(name, "NOT_SERVING");
  };
  return {
    port,
    health,
    notServing,
    async shutdown(graceMs) {
      notServing();
      // tryShutdown stops accepting new calls and resolves once in-flight calls have finished.
      const drained = new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      const timer = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), graceMs).unref());
      if ((await Promise.race([drained, timer])) === "timeout") {
        options.instrumentation.logger.warn({ graceMs }, "in-flight calls did not finish in time; forcing shutdown");
        server.forceShutdown();
      }
      await Promise.allSettled([...options.instrumentation.inFlight]);
    },
  };
}
