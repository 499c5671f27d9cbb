import {
  Channel,
  credentials,
  Metadata,
  status as Status,
  type ChannelInterface,
  type ChannelOptions,
  type StatusObject,
} from "@grpc/grpc-js";
import { isIPv4, isIPv6 } from "node:net";
import { ACTOR_METADATA, ERROR_CODE_METADATA, GRPC_CHANNEL_OPTIONS, REQUEST_ID_METADATA } from "./grpc-server.js";
import { AVOID_REPLICA_METADATA, registerRoundRobinAvoiding, ROUND_ROBIN_AVOIDING } from "./round-robin-avoiding.js";
import { TRACEPARENT } from "./tracing.js";

/** A unary method of a generated service definition (ts-proto `XServiceService.method`). */
export interface UnaryMethod<Req, Res> {
  path: string;
  requestStream: false;
  responseStream: false;
  requestSerialize(value: Req): Buffer;
  responseDeserialize(bytes: Buffer): Res;
}

/** A generated service definition (ts-proto `XServiceService`), or several spread into one object. */
export type ServiceDefinition = Readonly<
  Record<
    string,
    {
      path: string;
      requestStream: boolean;
      responseStream: boolean;
      requestSerialize(value: never): Buffer;
      responseDeserialize(bytes: Buffer): unknown;
    }
  >
>;

/** What a caller says about one call. */
export interface CallOptions {
  /** Sent to the service as the `x-request-id` metadata; the service logs with it. */
  requestId: string;
  /** The caller's W3C trace context, sent as the `traceparent` metadata; the service's span is its child. */
  traceparent?: string | undefined;
  /** This call's deadline, in milliseconds from its start, instead of the client's default. */
  timeoutMs?: number;
  /**
   * Who asked, when a person did (a console user: `console:<userId>`), sent as the `x-actor`
   * metadata so the service can attribute the action; absent for API keys and operators.
   */
  actor?: string | undefined;
  /**
   * The call may be made twice: it only reads, or it is a mutation carrying an idempotency key
   * the service deduplicates on. Only such a call is retried, once, on another replica when its
   * connection dies before the service answered (diedBeforeAnswer); a mutation without a key
   * never is, since its first attempt may have taken effect.
   */
  repeatable?: boolean;
  /** Told of each retry on another replica, once it is over (the gateway logs it). */
  onReplicaRetry?: (retry: ReplicaRetry) => void;
}

/** One retry on another replica: what failed where, and how the retry ended. */
export interface ReplicaRetry {
  /** The method's path (`/catalog.v1.CatalogService/ListPets`). */
  method: string;
  /** The replica whose connection died under the first attempt (`ip:port`). */
  from: string;
  /** The first attempt's failure. */
  error: GrpcCallError;
  /** The replica the retry went to; undefined when no other was ready (the call then fails with `error`). */
  to: string | undefined;
  /** The retry's status code (OK when it succeeded). */
  code: Status;
}

/** A client's methods, derived from its definition: one promise-returning function per unary method. */
export type ServiceClient<D> = {
  [K in keyof D as D[K] extends UnaryMethod<never, unknown> ? K : never]: D[K] extends UnaryMethod<infer Req, infer Res>
    ? (request: Req, options: CallOptions) => Promise<Res>
    : never;
} & {
  /** Closes the channel if the client opened it (given an address); a channel passed in is its opener's to close. */
  close(): void;
};

export interface ClientDefaults {
  /** Every call's deadline, in milliseconds from its start, unless the call gives its own. */
  timeoutMs: number;
  /** Options of the channel the client opens when given an address (default CLIENT_CHANNEL_OPTIONS). */
  channelOptions?: ChannelOptions;
}

/** A failed call, shaped like grpc-js's ServiceError: status code, details, trailing metadata. */
export class GrpcCallError extends Error {
  override name = "GrpcCallError";
  constructor(
    readonly code: Status,
    readonly details: string,
    readonly metadata: Metadata,
  ) {
    super(`${code} ${Status[code]}: ${details}`);
  }
}

/**
 * Every call is balanced over every address the target resolves to (round_robin), instead of
 * grpc-js's default pick_first, which sends everything over the first connection that works.
 */
export const ROUND_ROBIN_SERVICE_CONFIG = JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] });

/**
 * How soon a connection to a process that went away is tried again: from 200 ms, doubling up to
 * 1 s. round_robin keeps reconnecting every address on its own (pick_first waited for the next
 * call), and grpc-js's default backoff grows to 120 s: a catalog down for 9 s was called again only
 * 6.8 s after it was back. With this cap it is called again within about a second; an attempt a
 * second to an address inside the cluster costs nothing worth saving.
 */
export const RECONNECT_BACKOFF: ChannelOptions = {
  "grpc.initial_reconnect_backoff_ms": 200,
  "grpc.max_reconnect_backoff_ms": 1_000,
};

/**
 * The clients' balancing: round_robin that lets a retry name the replica it must avoid
 * (round-robin-avoiding.ts); plain round_robin if a channel is opened without registering it.
 */
export const CLIENT_SERVICE_CONFIG = JSON.stringify({
  loadBalancingConfig: [{ [ROUND_ROBIN_AVOIDING]: {} }, { round_robin: {} }],
});

/**
 * Options of a long-lived client channel: GRPC_CHANNEL_OPTIONS, round_robin over every resolved
 * address (CLIENT_SERVICE_CONFIG), and keepalive pings every 30 s (answered within 10 s), so a
 * connection that died quietly is noticed before a call waits on it.
 */
export const CLIENT_CHANNEL_OPTIONS: ChannelOptions = {
  ...GRPC_CHANNEL_OPTIONS,
  "grpc.service_config": CLIENT_SERVICE_CONFIG,
  ...RECONNECT_BACKOFF,
  "grpc.keepalive_time_ms": 30_000,
  "grpc.keepalive_timeout_ms": 10_000,
};

/** A target that already names its grpc-js resolver (`ipv4:a,b`, `dns:///name:port`, `unix:path`). */
const GRPC_TARGET_SCHEME = /^(ipv4|ipv6|dns|unix|unix-abstract|vsock):/;

/**
 * The grpc-js target of an `*_ADDR` setting. A comma-separated list of IP addresses with ports
 * (`127.0.0.1:50051,127.0.0.1:50061`: several local processes of one service) becomes the
 * `ipv4:` / `ipv6:` target naming all of them; anything else (`host:port`, or a target with a
 * scheme such as `dns:///catalog-headless.ns.svc.cluster.local:50051`) is passed as it is.
 */
export function grpcTarget(address: string): string {
  if (GRPC_TARGET_SCHEME.test(address)) return address;
  const parts = address.split(",").map((part) => part.trim());
  if (parts.length === 1) return address;
  const hosts = parts.map((part) => /^\[?([^\]]*?)\]?:\d+$/.exec(part)?.[1] ?? "");
  if (hosts.every((host) => isIPv4(host))) return `ipv4:${parts.join(",")}`;
  if (hosts.every((host) => isIPv6(host))) return `ipv6:${parts.join(",")}`;
  throw new Error(
    `${address}: a list of addresses must be IP:port pairs of one family (use a dns:/// target for host names)`,
  );
}

/**
 * One channel (one HTTP/2 connection per resolved address, reconnecting) to an address or list
 * of addresses (grpcTarget), for the clients of every service it serves. Plaintext: services
 * talk inside the cluster network.
 */
export function createChannel(address: string, options: ChannelOptions = CLIENT_CHANNEL_OPTIONS): Channel {
  registerRoundRobinAvoiding();
  return new Channel(grpcTarget(address), credentials.createInsecure(), options);
}

/**
 * A typed client of a generated service definition: `client.method(request, { requestId })`
 * returns a promise of the response, or rejects with a GrpcCallError. Its type is derived from the
 * definition, so no one writes a per-method interface or wrapper. Several services of one address
 * share a channel either by spreading their definitions into one (`{ ...AService, ...BService }`)
 * or by passing the same channel to several clients.
 *
 * Deadlines and the request id are set here and nowhere else. A failure keeps the service's status
 * code, details and trailing metadata (GrpcCallError): all a caller needs to judge whether the call
 * may have applied and a retry is safe, which the gateway does in one place (apiErrorFromGrpc).
 */
export function createClient<D extends ServiceDefinition>(
  definition: D,
  channelOrAddress: ChannelInterface | string,
  defaults: ClientDefaults,
): ServiceClient<D> {
  if ("close" in definition) throw new Error(`${definition.close.path}: a method named close would hide close()`);
  const ownChannel = typeof channelOrAddress === "string";
  const channel = ownChannel ? createChannel(channelOrAddress, defaults.channelOptions) : channelOrAddress;
  const client: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(definition)) {
    if (method.requestStream || method.responseStream) continue;
    const unary = method as unknown as UnaryMethod<unknown, unknown>;
    client[name] = (request: unknown, options: CallOptions) =>
      startUnaryCall(channel, unary, request, options, options.timeoutMs ?? defaults.timeoutMs);
  }
  client.close = ownChannel ? () => channel.close() : () => undefined;
  return client as ServiceClient<D>;
}

/**
 * One unary call with a deadline and the request id, as a promise. It talks to the channel
 * directly rather than through grpc-js's Client method wrappers: no interceptor chain, no per-call
 * EventEmitter and stack capture. That is most of the gateway's per-request gRPC cost, and the
 * gateway makes one such call per partner request.
 *
 * A repeatable call (CallOptions.repeatable) whose connection died before the service answered
 * is made once more, on another replica (round-robin-avoiding.ts), within the same deadline; the
 * answer is the retry's. When no other replica is ready, the first failure is the answer.
 */
async function startUnaryCall<Req, Res>(
  channel: ChannelInterface,
  method: UnaryMethod<Req, Res>,
  request: Req,
  options: CallOptions,
  timeoutMs: number,
): Promise<Res> {
  const metadata = new Metadata();
  metadata.set(REQUEST_ID_METADATA, options.requestId);
  if (options.traceparent) metadata.set(TRACEPARENT, options.traceparent);
  if (options.actor) metadata.set(ACTOR_METADATA, options.actor);
  const deadline = Date.now() + timeoutMs;
  const message = method.requestSerialize(request);
  const first = await attemptUnaryCall(channel, method, message, metadata, deadline);
  if (first.ok) return first.value;
  if (!options.repeatable || !diedBeforeAnswer(first)) throw first.error;
  const elsewhere = metadata.clone();
  elsewhere.set(AVOID_REPLICA_METADATA, first.replica);
  const retry = await attemptUnaryCall(channel, method, message, elsewhere, deadline);
  const retried = { method: method.path, from: first.replica, error: first.error };
  if (retry.ok) {
    options.onReplicaRetry?.({ ...retried, to: retry.replica, code: Status.OK });
    return retry.value;
  }
  // No other replica took it (none ready: NO_OTHER_REPLICA, or none at all): the first failure says what happened.
  options.onReplicaRetry?.({ ...retried, to: retry.replica, code: retry.error.code });
  throw retry.replica === undefined ? first.error : retry.error;
}

/** An attempt that failed: how, where, and how far it got. */
interface FailedAttempt {
  ok: false;
  error: GrpcCallError;
  /** The replica (`ip:port`) the attempt was sent to; undefined when none was picked. */
  replica: string | undefined;
  /** Whether anything of the service's answer (headers, a message) arrived before the failure. */
  answered: boolean;
}

/** How one attempt of a call ended. */
type Attempt<Res> = { ok: true; value: Res; replica: string } | FailedAttempt;

/**
 * Whether an attempt failed because its connection died before the service answered: UNAVAILABLE
 * from grpc-js itself (the connection reset or dropped, the stream refused), on a replica it was
 * sent to, with nothing of an answer received. Not a service's own UNAVAILABLE (it carries an
 * error-code), not "No connection established" (no replica was picked: none is ready, so there
 * is none to retry on), not DEADLINE_EXCEEDED (the time is up).
 */
function diedBeforeAnswer(attempt: FailedAttempt): attempt is FailedAttempt & { replica: string } {
  return (
    attempt.error.code === Status.UNAVAILABLE &&
    attempt.replica !== undefined &&
    !attempt.answered &&
    attempt.error.metadata.get(ERROR_CODE_METADATA).length === 0
  );
}

function attemptUnaryCall<Req, Res>(
  channel: ChannelInterface,
  method: UnaryMethod<Req, Res>,
  message: Buffer,
  metadata: Metadata,
  deadline: number,
): Promise<Attempt<Res>> {
  return new Promise<Attempt<Res>>((resolve) => {
    const call = channel.createCall(method.path, deadline, undefined, null, null);
    let response: { value: Res } | undefined;
    let answered = false;
    call.start(metadata, {
      onReceiveMetadata: () => {
        answered = true;
      },
      onReceiveMessage: (bytes: Buffer) => {
        answered = true;
        try {
          response = { value: method.responseDeserialize(bytes) };
        } catch (error) {
          call.cancelWithStatus(Status.INTERNAL, `response could not be decoded: ${(error as Error).message}`);
        }
      },
      onReceiveStatus: (status: StatusObject) => {
        if (status.code === Status.OK && response) {
          resolve({ ok: true, value: response.value, replica: call.getPeer() });
          return;
        }
        const error =
          status.code === Status.OK
            ? new GrpcCallError(Status.UNIMPLEMENTED, "no response", status.metadata)
            : new GrpcCallError(status.code, status.details, status.metadata);
        // The call's peer is the replica's address once one was picked, else the channel's target.
        const peer = call.getPeer();
        resolve({ ok: false, error, replica: peer === channel.getTarget() ? undefined : peer, answered });
      },
    });
    call.sendMessageWithContext({}, message);
    call.halfClose();
    call.startRead();
  });
}
