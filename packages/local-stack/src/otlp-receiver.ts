/**
 * A local OTLP/HTTP trace receiver for tests and benchmarks: POST /v1/traces with the JSON
 * encoding (what @opentelemetry/exporter-trace-otlp-http sends), answered 200, spans decoded
 * with their service name, ids, parent, kind and attributes.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One exported span, as OTLP/HTTP JSON carries it (ids are hex strings). */
export interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

interface OtlpAnyValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpAnyValue;
}
interface OtlpRequest {
  resourceSpans: {
    resource: { attributes: OtlpAttribute[] };
    scopeSpans: {
      spans: Omit<ExportedSpan, "service" | "attributes"> & { attributes?: OtlpAttribute[] }[];
    }[];
  }[];
}

const valueOf = (v: OtlpAnyValue) =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));
const attributesOf = (list: OtlpAttribute[] = []) => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

export interface OtlpReceiver {
  /** The base URL: what OTEL_EXPORTER_OTLP_ENDPOINT is set to (the exporter appends /v1/traces). */
  url: string;
  /** Every span received so far, decoded. */
  spans: ExportedSpan[];
  /** Every request body received so far, as sent. */
  raw: string[];
  /** Spans received so far (counted also when not kept). */
  spanCount(): number;
  close(): Promise<void>;
}

/**
 * A local OTLP/HTTP receiver: POST /v1/traces with JSON (what exporter-trace-otlp-http sends).
 * With `keep: false` (a benchmark's sink) it only counts the spans and keeps nothing.
 */
export async function startOtlpReceiver(options: { keep?: boolean } = {}): Promise<OtlpReceiver> {
  const keep = options.keep ?? true;
  const spans: ExportedSpan[] = [];
  const raw: string[] = [];
  let count = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      if (req.method === "POST" && req.url === "/v1/traces" && !keep) {
        count += body.split('"spanId":').length - 1;
      } else if (req.method === "POST" && req.url === "/v1/traces") {
        raw.push(body);
        const request = JSON.parse(body) as OtlpRequest;
        for (const resourceSpans of request.resourceSpans) {
          const service = String(attributesOf(resourceSpans.resource.attributes)["service.name"]);
          for (const scope of resourceSpans.scopeSpans)
            for (const span of scope.spans as unknown as (ExportedSpan & { attributes?: OtlpAttribute[] })[])
              count = spans.push({
                service,
                traceId: span.traceId,
                spanId: span.spanId,
                ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
                name: span.name,
                kind: span.kind,
                attributes: attributesOf(span.attributes),
              });
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    raw,
    spanCount: () => count,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
