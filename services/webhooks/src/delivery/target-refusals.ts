/**
 * The SSRF guard's metric: endpoint URLs refused by the TargetResolver, at creation/update
 * (`check: endpoint`) and at attempts (`check: attempt`), by refusal (loopback, private,
 * metadata, port_not_allowed, unresolvable, ...).
 */
import { Counter, type Registry } from "prom-client";
import type { TargetRefusal } from "./target-resolver.js";

export type TargetCheck = "endpoint" | "attempt";

export function createTargetRefusalCounter(registry: Registry): (check: TargetCheck, refusal: TargetRefusal) => void {
  const counter = new Counter({
    name: "webhooks_target_refusals_total",
    help: "Endpoint URLs refused by the SSRF guard, at endpoint creation/update or at an attempt, by refusal.",
    labelNames: ["check", "refusal"],
    registers: [registry],
  });
  return (check, refusal) => counter.inc({ check, refusal });
}
