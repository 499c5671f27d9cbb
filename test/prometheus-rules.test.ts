/**
 * The Prometheus alerting rules of deploy/prometheus, one file per service: their structure always
 * (every rule an alert with an expression over the service's metrics, a severity, a summary, a
 * description and a runbook link in docs/operations.md; every metric it names is documented
 * there), and, when promtool is on PATH (Debian package `prometheus`), `promtool check rules` and
 * the rule unit tests of <service>-alerts.test.yaml (each alert firing on its input series, and
 * not before).
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

const ruleFiles = [
  {
    service: "webhooks",
    file: "webhooks-alerts.yaml",
    tests: "webhooks-alerts.test.yaml",
    runbook: /docs\/operations\.md#webhooks$/,
    alerts: [
      "WebhooksOutboxLag",
      "WebhooksDeliveriesBehind",
      "WebhooksDeadLetters",
      "WebhooksAttemptsFailing",
      "WebhooksTargetRefusedAtAttempt",
    ],
  },
  {
    service: "notify",
    file: "notify-alerts.yaml",
    tests: "notify-alerts.test.yaml",
    runbook: /docs\/operations\.md#poll-projections-get-work-attention-activity$/,
    alerts: ["NotifyOutboxLag", "NotifyProjectorStalled"],
  },
];

describe.each(ruleFiles)("the $service alerting rules", ({ service, file, tests, runbook, alerts }) => {
  const metric = new RegExp(`${service}_[a-z_]+`, "g");

  it("are alerts on documented metrics of the service, each with severity, summary, description and runbook", async () => {
    const doc = parse(await readFile(join(dir, file), "utf8")) as {
      groups: { name: string; rules: Rule[] }[];
    };
    const operations = await readFile(join(root, "docs", "operations.md"), "utf8");
    expect(doc.groups.map((g) => g.name)).toEqual([service]);
    const rules = doc.groups[0]!.rules;
    expect(rules.map((r) => r.alert)).toEqual(alerts);
    for (const rule of rules) {
      expect(rule.record).toBeUndefined();
      expect(rule.expr).toMatch(metric);
      if (rule.for !== undefined) expect(rule.for).toMatch(/^\d+[smh]$/);
      expect(["critical", "warning", "info"]).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary).toBeTruthy();
      expect(rule.annotations?.description).toBeTruthy();
      expect(rule.annotations?.runbook_url).toMatch(runbook);
      // The alert and every metric it reads are documented.
      expect(operations).toContain(`\`${rule.alert!}\``);
      for (const name of rule.expr.match(metric)!) expect(operations).toContain(`\`${name}`);
    }
  });

  it("pass promtool check rules and their unit tests (when promtool is on PATH)", async (context) => {
    const tool = await promtool();
    if (!tool) {
      context.skip("promtool is not on PATH (Debian: apt-get install prometheus); the structure test above still ran");
      return;
    }
    const checked = await run(tool, ["check", "rules", file], { cwd: dir });
    expect(checked.stdout).toContain(`SUCCESS: ${alerts.length} rules found`);
    const tested = await run(tool, ["test", "rules", tests], { cwd: dir });
    expect(`${tested.stdout}${tested.stderr}`).toMatch(/SUCCESS/);
  });
});
