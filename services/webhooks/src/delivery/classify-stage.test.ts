/** The classify stage: the outcome and what the attempt's span says about it. */
import { SpanStatusCode, type Span } from "@platform/service-kit/tracing";
import { describe, expect, it } from "vitest";
import { answered } from "./attempt-fakes.testing.js";
import { classify } from "./classify-stage.js";
import type { DeliveryResponse } from "./https-sender.js";

describe("classify", () => {
  function recordingSpan() {
    const attributes: Record<string, unknown> = {};
    const statuses: unknown[] = [];
    const span = {
      setAttribute: (key: string, value: unknown) => void (attributes[key] = value),
      setStatus: (status: unknown) => void statuses.push(status),
    } as unknown as Span;
    return { span, attributes, statuses };
  }

  it("a 2xx succeeded: outcome and status code on the span, no error status", () => {
    const { span, attributes, statuses } = recordingSpan();
    expect(classify(answered(204), span)).toEqual({ ok: true, statusCode: 204 });
    expect(attributes).toEqual({ "webhooks.outcome": "succeeded", "http.response.status_code": 204 });
    expect(statuses).toEqual([]);
  });

  it("a 503 failed: the reason on the span, with an error status", () => {
    const { span, attributes, statuses } = recordingSpan();
    expect(classify(answered(503), span)).toEqual({ ok: false, reason: "non_2xx_status", statusCode: 503 });
    expect(attributes).toEqual({ "webhooks.outcome": "non_2xx_status", "http.response.status_code": 503 });
    expect(statuses).toEqual([{ code: SpanStatusCode.ERROR, message: "non_2xx_status" }]);
  });

  it("a timeout has no status code", () => {
    const { span, attributes } = recordingSpan();
    const response: DeliveryResponse = { ...answered(200), result: { kind: "timeout" } };
    expect(classify(response, span)).toEqual({ ok: false, reason: "timeout", statusCode: null });
    expect(attributes).toEqual({ "webhooks.outcome": "timeout" });
  });
});
