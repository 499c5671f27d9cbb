/**
 * The Prometheus alerting rules, deploy/helm/platform/files/prometheus/<name>-alerts.yaml, and the
 * chart's PrometheusRule made from them:
 * - their structure: every alert with a severity, a summary, a description and a runbook_url that
 *   is a section of deploy/helm/README.md (the anchor exists; every alert section of the README is
 *   an alert), every metric an expression reads documented in docs/operations.md;
 * - `promtool check rules` on every rule file and `promtool test rules` on every <name>-alerts.test.yaml,
 *   where each alert fires at least once and is asserted silent at least once. promtool comes from
 *   Debian's `prometheus` package; `.ci/run` installs it in CI. Without it the promtool tests skip
 *   on a workstation and FAIL under CI=true;
 * - the PrometheusRule rendered by the real helm (`prometheusRule.enabled=true`) holds exactly the
 *   files' groups, in file order, and passes `promtool check rules` itself.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { findHelm } from "./helm-binary.js";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..");
const chart = join(root, "deploy", "helm", "platform");
const dir = join(chart, "files", "prometheus");
const readmePath = join(root, "deploy", "helm", "README.md");

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleFile {
  groups: { name: string; rules: Rule[] }[];
}
interface Rendered {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels: Record<string, string> };
  spec: RuleFile;
}

/**
 * The rule files and their alerts. Every service is covered: the gateway by its SLO burn rates,
 * catalog, notify and webhooks by the gRPC error ratio (per `service`), all four by the pool
 * saturation, notify and webhooks by their outbox lag, the JetStream consumers of EVENTS
 * (notify-projections, webhooks-fanout) and of WEBHOOK_DELIVERIES (webhooks-delivery) by the
 * consumer alerts, webhooks' dead letters by WebhooksDeadLetters.
 */
const ruleFiles = [
  {
    file: "gateway-alerts.yaml",
    alerts: [
      "GatewayErrorBudgetBurnFast",
      "GatewayErrorBudgetBurnSlow",
      "GatewayLatencyBudgetBurnFast",
      "GatewayLatencyBudgetBurnSlow",
    ],
    records: 8,
  },
  { file: "notify-alerts.yaml", alerts: ["NotifyOutboxLag", "NotifyProjectorStalled"], records: 0 },
  {
    file: "platform-alerts.yaml",
    alerts: [
      "GrpcServerErrorRatioHigh",
      "DatabasePoolSaturated",
      "JetStreamConsumerBacklog",
      "JetStreamConsumerAckPendingNearLimit",
    ],
    records: 0,
  },
  {
    file: "webhooks-alerts.yaml",
    alerts: [
      "WebhooksOutboxLag",
      "WebhooksDeliveriesBehind",
      "WebhooksDeadLetters",
      "WebhooksAttemptsFailing",
      "WebhooksTargetRefusedAtAttempt",
    ],
    records: 0,
  },
];
const allAlerts = ruleFiles.flatMap((f) => f.alerts);

const load = async (file: string) => parse(await readFile(join(dir, file), "utf8")) as RuleFile;

/** GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to dashes. */
function githubAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of every heading of a Markdown text, and the level-3 headings under `## Alerts`. */
function readmeSections(markdown: string): { anchors: Set<string>; alertSections: string[] } {
  const anchors = new Set<string>();
  const alertSections: string[] = [];
  let inAlerts = false;
  let fence = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fence = !fence;
    if (fence) continue;
    const heading = /^(#{1,6}) (.+)$/.exec(line);
    if (!heading) continue;
    anchors.add(githubAnchor(heading[2]!));
    if (heading[1] === "##") inAlerts = heading[2] === "Alerts";
    else if (heading[1] === "###" && inAlerts) alertSections.push(heading[2]!.replace(/`/g, ""));
  }
  return { anchors, alertSections };
}

/** Metric names an expression reads (not label names, not recording rules' level:metric:op names). */
function metricsOf(expr: string): string[] {
  const names =
    expr.match(/(?<![:\w])(?:http|grpc|db|jetstream|notify|webhooks|gateway)_[a-z_]+(?![:\w])(?!\s*[=!])/g) ?? [];
  return [...new Set(names.map((n) => n.replace(/_(count|bucket|sum)$/, "")))];
}

async function promtool(): Promise<boolean> {
  try {
    await run("promtool", ["--version"]);
    return true;
  } catch {
    return false;
  }
}

describe("the alerting rules", () => {
  it("are exactly the listed files, each with its promtool unit tests beside it", async () => {
    const names = (await readdir(dir)).sort();
    expect(names).toEqual(ruleFiles.flatMap((f) => [f.file.replace(/\.yaml$/, ".test.yaml"), f.file]).sort());
  });

  it.each(ruleFiles)(
    "$file: alerts with severity, summary, description and a runbook section of the chart README",
    async ({ file, alerts, records }) => {
      const doc = await load(file);
      const { anchors } = readmeSections(await readFile(readmePath, "utf8"));
      const operations = await readFile(join(root, "docs", "operations.md"), "utf8");
      const rules = doc.groups.flatMap((g) => g.rules);
      expect(rules.filter((r) => r.record !== undefined)).toHaveLength(records);
      expect(rules.filter((r) => r.alert !== undefined).map((r) => r.alert)).toEqual(alerts);
      for (const rule of rules) {
        expect(rule.expr).toBeTruthy();
        for (const metric of metricsOf(rule.expr)) expect(operations, metric).toContain(`\`${metric}`);
        if (rule.record !== undefined) continue;
        if (rule.for !== undefined) expect(rule.for).toMatch(/^\d+[smh]$/);
        expect(["critical", "warning", "info"]).toContain(rule.labels?.severity);
        expect(rule.annotations?.summary).toBeTruthy();
        expect(rule.annotations?.description).toBeTruthy();
        const anchor = rule.alert!.toLowerCase();
        expect(rule.annotations?.runbook_url).toBe(`deploy/helm/README.md#${anchor}`);
        expect(anchors.has(anchor), `README anchor #${anchor}`).toBe(true);
      }
    },
  );

  it("are explained by a README whose every link resolves (anchors and repository files)", async () => {
    const markdown = await readFile(readmePath, "utf8");
    const { anchors } = readmeSections(markdown);
    const links = [...markdown.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThan(20);
    for (const link of links) {
      if (/^[a-z]+:/.test(link)) continue;
      const [path, anchor] = link.split("#");
      if (!path) expect(anchors.has(anchor!), link).toBe(true);
      else if (anchor && path.endsWith(".md")) {
        const other = readmeSections(await readFile(join(root, "deploy", "helm", path), "utf8"));
        expect(other.anchors.has(anchor), link).toBe(true);
      } else await expect(stat(join(root, "deploy", "helm", path)), link).resolves.toBeDefined();
    }
  });

  it("have a README section per alert and no section without an alert", async () => {
    const { alertSections } = readmeSections(await readFile(readmePath, "utf8"));
    expect([...alertSections].sort()).toEqual([...allAlerts].sort());
  });

  it.each(ruleFiles)(
    "$file: every alert fires in a unit test and is asserted silent in one",
    async ({ file, alerts }) => {
      const tests = parse(await readFile(join(dir, file.replace(/\.yaml$/, ".test.yaml")), "utf8")) as {
        rule_files: string[];
        tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
      };
      expect(tests.rule_files).toEqual([file]);
      const cases = tests.tests.flatMap((t) => t.alert_rule_test);
      for (const alert of alerts) {
        const mine = cases.filter((c) => c.alertname === alert);
        expect(
          mine.some((c) => c.exp_alerts.length > 0),
          `${alert} fires`,
        ).toBe(true);
        expect(
          mine.some((c) => c.exp_alerts.length === 0),
          `${alert} silent`,
        ).toBe(true);
      }
      expect(new Set(cases.map((c) => c.alertname))).toEqual(new Set(alerts));
    },
  );

  describe("checked by promtool", () => {
    let available = false;
    beforeAll(async () => {
      available = await promtool();
    });
    const need = (context: { skip: (note: string) => void }) => {
      if (available) return true;
      if (process.env.CI) {
        throw new Error("promtool is not on PATH under CI: .ci/run installs Debian's prometheus package");
      }
      context.skip("promtool is not on PATH (Debian: apt-get install prometheus); CI fails here instead");
      return false;
    };

    it.for(ruleFiles)("$file passes promtool check rules", async ({ file, alerts, records }, context) => {
      if (!need(context)) return;
      const { stdout } = await run("promtool", ["check", "rules", file], { cwd: dir });
      expect(stdout).toContain(`SUCCESS: ${alerts.length + records} rules found`);
    });

    it.for(ruleFiles)("$file passes its promtool unit tests", async ({ file }, context) => {
      if (!need(context)) return;
      const tested = await run("promtool", ["test", "rules", file.replace(/\.yaml$/, ".test.yaml")], { cwd: dir });
      expect(`${tested.stdout}${tested.stderr}`).toMatch(/SUCCESS/);
    });

    it("fails a unit test whose expected alert does not fire (the checks bite)", async (context) => {
      if (!need(context)) return;
      const scratch = await mkdtemp(join(tmpdir(), "rules-"));
      try {
        const source = await readFile(join(dir, "platform-alerts.yaml"), "utf8");
        // The pool alert at 99% instead of 90%: catalog's 9 of 10 no longer fires.
        await writeFile(join(scratch, "platform-alerts.yaml"), source.replace(">= 0.9", ">= 0.99"));
        await writeFile(
          join(scratch, "platform-alerts.test.yaml"),
          await readFile(join(dir, "platform-alerts.test.yaml"), "utf8"),
        );
        const failed = await run("promtool", ["test", "rules", "platform-alerts.test.yaml"], { cwd: scratch }).then(
          () => undefined,
          (error: { stdout: string; stderr: string }) => `${error.stdout}${error.stderr}`,
        );
        expect(failed).toMatch(/FAILED[\s\S]*alertname: DatabasePoolSaturated/);
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
    });
  });
});

describe("the chart's PrometheusRule (real helm)", () => {
  let helm: string;
  beforeAll(async () => {
    helm = (await findHelm()).path;
  }, 60_000);

  const render = async (...sets: string[]) => {
    const { stdout } = await run(helm, ["template", "rel", chart, ...sets.flatMap((s) => ["--set", s])]);
    return parseAllDocuments(stdout)
      .map((d) => d.toJSON() as Rendered | null)
      .filter((o): o is Rendered => o !== null);
  };
  const filesGroups = async () => (await Promise.all(ruleFiles.map((f) => load(f.file)))).flatMap((d) => d.groups);

  it("is off by default", async () => {
    expect((await render()).filter((o) => o.kind === "PrometheusRule")).toEqual([]);
  });

  it("holds exactly the groups of the rule files promtool checks, labelled for the operator's selector", async () => {
    const rules = (await render("prometheusRule.enabled=true", "prometheusRule.labels.release=monitoring")).filter(
      (o) => o.kind === "PrometheusRule",
    );
    expect(rules).toHaveLength(1);
    const rule = rules[0]!;
    expect(rule.apiVersion).toBe("monitoring.coreos.com/v1");
    expect(rule.metadata.name).toBe("rel-platform");
    expect(rule.metadata.labels).toMatchObject({ release: "monitoring", "app.kubernetes.io/instance": "rel" });
    expect(Object.keys(rule.spec)).toEqual(["groups"]);
    expect(rule.spec.groups).toEqual(await filesGroups());
    expect(rule.spec.groups.map((g) => g.name)).toEqual(["gateway-slo", "notify", "platform", "webhooks"]);
  });

  it("passes promtool check rules as rendered", async (context) => {
    if (!(await promtool())) {
      if (process.env.CI) throw new Error("promtool is not on PATH under CI");
      context.skip("promtool is not on PATH");
      return;
    }
    const [rule] = (await render("prometheusRule.enabled=true")).filter((o) => o.kind === "PrometheusRule");
    const scratch = await mkdtemp(join(tmpdir(), "rendered-rules-"));
    try {
      await writeFile(join(scratch, "rendered.yaml"), JSON.stringify({ groups: rule!.spec.groups }));
      const { stdout } = await run("promtool", ["check", "rules", "rendered.yaml"], { cwd: scratch });
      const total = ruleFiles.reduce((n, f) => n + f.alerts.length + f.records, 0);
      expect(stdout).toContain(`SUCCESS: ${total} rules found`);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });

  it("prefixes every runbook_url with prometheusRule.runbookBaseUrl when set", async () => {
    const base = "https://git.internal/platform/blob/v1/";
    const [rule] = (await render("prometheusRule.enabled=true", `prometheusRule.runbookBaseUrl=${base}`)).filter(
      (o) => o.kind === "PrometheusRule",
    );
    const urls = rule!.spec.groups.flatMap((g) =>
      g.rules.filter((r) => r.alert).map((r) => r.annotations!.runbook_url),
    );
    expect(urls).toEqual(allAlerts.map((a) => `${base}deploy/helm/README.md#${a.toLowerCase()}`));
  });

  it("refuses an unknown key under prometheusRule (strict schema)", async () => {
    const refused = await render("prometheusRule.enabeld=true").then(
      () => "",
      (error: { stderr: string }) => error.stderr,
    );
    expect(refused).toMatch(/prometheusRule.*additional properties 'enabeld' not allowed/);
  });

  it("leaves the promtool unit tests out of the chart package", async () => {
    const out = await mkdtemp(join(tmpdir(), "chart-package-"));
    try {
      await run(helm, ["package", chart, "--destination", out]);
      const [archive] = await readdir(out);
      const { stdout } = await run("tar", ["-tzf", join(out, archive!)]);
      const packaged = stdout.split("\n").filter((p) => p.includes("files/prometheus/"));
      expect(packaged.map((p) => p.replace(/^platform\/files\/prometheus\//, "")).sort()).toEqual(
        ruleFiles.map((f) => f.file).sort(),
      );
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});
