import { Metadata, status as Status, type Client, type StatusObject } from "@grpc/grpc-js";
import { REQUEST_ID_METADATA } from "./grpc-server.js";

/** A unary method of a generated service definition (ts-proto `XServiceService.method`). */
export interface UnaryMethod<Req, Res> {
  path: string;
  requestSerialize(value: Req): Buffer;
  responseDeserialize(bytes: Buffer): Res;
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
 * One unary call with a deadline and the request id, as a promise. It talks to the client's
 * channel directly rather than through grpc-js's Client method wrappers: no interceptor chain,
 * no per-call EventEmitter and stack capture. That is most of the gateway's per-request gRPC cost,
 * and the gateway makes one such call per partner request.
 */
export function callUnary<Req, Res>(
  client: Client,
  method: UnaryMethod<Req, Res>,
  request: Req,
  options: { requestId: string; timeoutMs: number },
): Promise<Res> {
  const metadata = new Metadata();
  metadata.set(REQUEST_ID_METADATA, options.requestId);
  return new Promise<Res>((resolve, reject) => {
    const call = client.getChannel().createCall(method.path, Date.now() + options.timeoutMs, undefined, null, null);
    let response: { value: Res } | undefined;
    call.start(metadata, {
      onReceiveMetadata: () => undefined,
      onReceiveMessage: (bytes: Buffer) => {
        try {
          response = { value: method.responseDeserialize(bytes) };
        } catch (error) {
          call.cancelWithStatus(Status.INTERNAL, `response could not be decoded: ${(error as Error).message}`);
        }
      },
      onReceiveStatus: (status: StatusObject) => {
        if (status.code === Status.OK && response) resolve(response.value);
        else if (status.code === Status.OK)
          reject(new GrpcCallError(Status.UNIMPLEMENTED, "no response", status.metadata));
        else reject(new GrpcCallError(status.code, status.details, status.metadata));
      },
    });
    call.sendMessageWithContext({}, method.requestSerialize(request));
    call.halfClose();
    call.startRead();
  });
}
