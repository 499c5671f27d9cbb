import { Metadata, type CallOptions, type ClientUnaryCall, type ServiceError } from "@grpc/grpc-js";
import { REQUEST_ID_METADATA } from "./grpc-server.js";

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => ClientUnaryCall;

/** Calls a generated grpc-js unary method as a promise, with a deadline and the request id. */
export function callUnary<Req, Res>(
  method: UnaryMethod<Req, Res>,
  request: Req,
  options: { requestId: string; timeoutMs: number },
): Promise<Res> {
  const metadata = new Metadata();
  metadata.set(REQUEST_ID_METADATA, options.requestId);
  return new Promise<Res>((resolve, reject) => {
    method(request, metadata, { deadline: Date.now() + options.timeoutMs }, (error, response) =>
      error ? reject(error) : resolve(response),
    );
  });
}
