import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { countingTargetResolver } from "./counting-target-resolver.js";
import { createPipelineMetrics } from "./pipeline-metrics.js";
import { createTargetResolver, TargetNotAllowedError } from "./target-resolver.js";

describe("the counting target resolver", () => {
  it("counts refusals by address class and path, and passes answers and refusals through", async () => {
    const registry = new Registry();
    const metrics = createPipelineMetrics(registry);
    const inner = createTargetResolver({
      allowPrivate: false,
      lookup: (name) => Promise.resolve(name === "public.example" ? [{ address: "93.184.216.34", family: 4 }] : []),
    });
    const create = countingTargetResolver(inner, metrics, "create");
    const attempt = countingTargetResolver(inner, metrics, "attempt");

    expect(await create.resolve("public.example")).toEqual({ address: "93.184.216.34", family: 4 });
    await expect(create.resolve("127.0.0.1")).rejects.toBeInstanceOf(TargetNotAllowedError);
    await expect(create.resolve("169.254.169.254")).rejects.toBeInstanceOf(TargetNotAllowedError);
    await expect(attempt.resolve("10.1.2.3")).rejects.toBeInstanceOf(TargetNotAllowedError);
    await expect(attempt.resolve("10.9.9.9")).rejects.toBeInstanceOf(TargetNotAllowedError);
    await expect(attempt.resolve("gone.example")).rejects.toBeInstanceOf(TargetNotAllowedError);

    const values = (await registry.getSingleMetric("webhooks_target_refusals_total")!.get()).values;
    const byLabels = Object.fromEntries(values.map((v) => [`${v.labels.path}/${v.labels.address_class}`, v.value]));
    expect(byLabels).toEqual({
      "create/loopback": 1,
      "create/metadata": 1,
      "attempt/private": 2,
      "attempt/unresolvable": 1,
    });
  });
});
