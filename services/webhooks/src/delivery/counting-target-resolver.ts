/**
 * A TargetResolver that counts its refusals (webhooks_target_refusals_total{address_class,path}):
 * main.ts wraps the resolver once for the creation path (WebhookService) and once for the attempt
 * path (the delivery worker), so neither has to know about metrics.
 */
import type { PipelineMetrics, RefusalPath } from "./pipeline-metrics.js";
import { TargetNotAllowedError, type TargetResolver } from "./target-resolver.js";

export function countingTargetResolver(
  inner: TargetResolver,
  metrics: Pick<PipelineMetrics, "targetRefusals">,
  path: RefusalPath,
): TargetResolver {
  return {
    async resolve(hostname) {
      try {
        return await inner.resolve(hostname);
      } catch (error) {
        if (error instanceof TargetNotAllowedError) {
          metrics.targetRefusals.inc({ address_class: error.refusal, path });
        }
        throw error;
      }
    },
  };
}
