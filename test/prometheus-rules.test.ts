/**
 * The Prometheus alerting rules of deploy/prometheus: their structure always (every rule an alert
 * with an expression over webhooks_ metrics, a severity, a summary, a description and a runbook
 * link in docs/operations.md; every metric it names is documented there), and, when promtool is
 * on PATH (Debian package `prometheus`), `promtool check rules` and the rule unit tests of
 * webhooks-alerts.test.yaml (each alert firing on its input series, and not before).
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..");
const dir = join(root, "deploy", "prometheus");

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

async function promtool(): Promise<string | undefined> {
  try {
    await run("promtool", ["--version"]);
    return "promtool";
  } catch {
    return undefined;
  }
}

describe("the webhooks alerting rules", () => {
  it("are alerts on documented webhooks_ metrics, each with severity, summary, description and runbook", async () => {
    const doc = parse(await readFile(join(dir, "webhooks-alerts.yaml"), "utf8")) as {
      groups: { name: string; rules: Rule[] }[];
    };
    const operations = await readFile(join(root, "docs", "operations.md"), "utf8");
    expect(doc.groups.map((g) => g.name)).toEqual(["webhooks"]);
    const rules = doc.groups[0]!.rules;
    expect(rules.map((r) => r.alert)).toEqual([
      "WebhooksOutboxLag",
      "WebhooksDeliveriesBehind",
      "WebhooksDeadLetters",
      "WebhooksAttemptsFailing",
      "WebhooksTargetRefusedAtAttempt",
    ]);
    for (const rule of rules) {
      expect(rule.record).toBeUndefined();
      expect(rule.expr).toMatch(/webhooks_[a-z_]+/);
      if (rule.for !== undefined) expect(rule.for).toMatch(/^\d+[smh]$/);
      expect(["critical", "warning", "info"]).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary).toBeTruthy();
      expect(rule.annotations?.description).toBeTruthy();
      expect(rule.annotations?.runbook_url).toMatch(/docs\/operations\.md#webhooks$/);
      // The alert and every metric it reads are documented.
      expect(operations).toContain(`\`${rule.alert!}\``);
      for (const metric of rule.expr.match(/webhooks_[a-z_]+/g)!) expect(operations).toContain(`\`${metric}`);
    }
  });

  it("pass promtool check rules and their unit tests (when promtool is on PATH)", async (context) => {
    const tool = await promtool();
    if (!tool) {
      context.skip("promtool is not on PATH (Debian: apt-get install prometheus); the structure test above still ran");
      return;
    }
    const checked = await run(tool, ["check", "rules", "webhooks-alerts.yaml"], { cwd: dir });
    expect(checked.stdout).toMatch(/SUCCESS: 5 rules found/);
    const tested = await run(tool, ["test", "rules", "webhooks-alerts.test.yaml"], { cwd: dir });
    expect(`${tested.stdout}${tested.stderr}`).toMatch(/SUCCESS/);
  });
});
