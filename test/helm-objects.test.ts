/* Rendered manifests are untyped YAML; the assertions below walk them freely. */
/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-return */
import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { findHelm } from "./helm-binary.js";
import { validateObject, type KubernetesObject } from "./k8s-models.js";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..");
const chart = join(root, "deploy", "helm", "platform");
const allOn = join(chart, "ci", "all-on-values.yaml");
const services = ["gateway", "catalog", "notify", "webhooks"] as const;
const grpcServices = ["catalog", "notify", "webhooks"] as const;
let helm: string;

interface K8sObject extends KubernetesObject {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Record<string, any>;
}

async function render(args: string[] = [], chartDir = chart): Promise<K8sObject[]> {
  const { stdout } = await run(helm, ["template", "rel", chartDir, ...args], { maxBuffer: 32 << 20 });
  return parseAllDocuments(stdout)
    .map((d) => d.toJSON() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}
const sets = (...values: string[]) => values.flatMap((s) => ["--set", s]);
const ofKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const component = (o: { metadata: { labels?: Record<string, string> } }) =>
  o.metadata.labels?.["app.kubernetes.io/component"];
const named = (objects: K8sObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name)!;
const workloads = (objects: K8sObject[]) => [...ofKind(objects, "Deployment"), ...ofKind(objects, "Job")];
const deploymentOf = (objects: K8sObject[], service: string) => named(objects, "Deployment", `rel-platform-${service}`);
const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

let defaults: K8sObject[];
let everything: K8sObject[];
/** Whether the chart has a PrometheusRule switch (values.schema.json's prometheusRule.enabled). */
let prometheusRule = false;

describe("the chart's objects, checked by helm and the Kubernetes schemas", () => {
  beforeAll(async () => {
    helm = (await findHelm()).path;
    const schema = JSON.parse(await readFile(join(chart, "values.schema.json"), "utf8"));
    prometheusRule = schema.properties.prometheusRule?.properties?.enabled !== undefined;
    // Every option on: the all-on values, and the PrometheusRule when the chart has one.
    const on = ["-f", allOn, ...(prometheusRule ? sets("prometheusRule.enabled=true") : [])];
    [defaults, everything] = await Promise.all([render(), render(on)]);
  }, 60_000);

  it("passes helm lint --strict with the defaults and with every option on", async () => {
    for (const args of [[], ["-f", allOn, ...(prometheusRule ? sets("prometheusRule.enabled=true") : [])]]) {
      const { stdout } = await run(helm, ["lint", "--strict", chart, ...args]);
      expect(stdout, args.join(" ")).toContain("1 chart(s) linted, 0 chart(s) failed");
    }
  });

  it("renders every option with the all-on values", () => {
    const count = (kind: string) => ofKind(everything, kind).length;
    expect({
      Deployment: count("Deployment"),
      Service: count("Service"),
      ServiceAccount: count("ServiceAccount"),
      HorizontalPodAutoscaler: count("HorizontalPodAutoscaler"),
      PodDisruptionBudget: count("PodDisruptionBudget"),
      Job: count("Job"),
      NetworkPolicy: count("NetworkPolicy"),
      ServiceMonitor: count("ServiceMonitor"),
      Ingress: count("Ingress"),
    }).toEqual({
      Deployment: 4,
      Service: 7,
      ServiceAccount: 8,
      HorizontalPodAutoscaler: 4,
      PodDisruptionBudget: 4,
      Job: 4,
      NetworkPolicy: 6,
      ServiceMonitor: 4,
      Ingress: 1,
    });
    expect(count("NetworkPolicy") + count("HorizontalPodAutoscaler") + count("Ingress")).toBeGreaterThan(0);
    for (const kind of ["HorizontalPodAutoscaler", "NetworkPolicy", "ServiceMonitor", "Ingress"])
      expect(ofKind(defaults, kind), `${kind} is off by default`).toEqual([]);
  });

  it("validates every rendered object, default and all-on, against its kubernetes-models schema, unknown fields refused", async () => {
    const problems: string[] = [];
    for (const object of [...defaults, ...everything]) {
      await validateObject(object).catch((error: unknown) => problems.push((error as Error).message));
    }
    expect(problems).toEqual([]);
    expect(new Set(everything.map((o) => `${o.apiVersion}/${o.kind}`))).toEqual(
      new Set([
        "v1/ServiceAccount",
        "v1/Service",
        "apps/v1/Deployment",
        "batch/v1/Job",
        "policy/v1/PodDisruptionBudget",
        "autoscaling/v2/HorizontalPodAutoscaler",
        "networking.k8s.io/v1/NetworkPolicy",
        "networking.k8s.io/v1/Ingress",
        "monitoring.coreos.com/v1/ServiceMonitor",
        ...(prometheusRule ? ["monitoring.coreos.com/v1/PrometheusRule"] : []),
      ]),
    );
  }, 60_000);

  it("the validation bites: a wrong type, an unknown field at any depth or an unknown kind fails", async () => {
    const copy = <T>(o: T): T => structuredClone(o);
    const deployment = copy(deploymentOf(everything, "catalog"));
    await expect(validateObject(deployment)).resolves.toBeUndefined();

    const wrongType = copy(deployment);
    wrongType.spec.template.spec.containers[0].startupProbe.grpc.port = "grpc";
    await expect(validateObject(wrongType)).rejects.toThrow(
      "Deployment rel-platform-catalog: data/spec/template/spec/containers/0/startupProbe/grpc/port must be integer",
    );
    const typo = copy(deployment);
    typo.spec.template.spec.containers[0].startupprobe = typo.spec.template.spec.containers[0].startupProbe;
    await expect(validateObject(typo)).rejects.toThrow(
      "Deployment rel-platform-catalog: spec.template.spec.containers[0].startupprobe: unknown field",
    );
    const ingress = copy(ofKind(everything, "Ingress")[0]!);
    ingress.spec.rules[0].http.paths[1].pathtype = "Prefix";
    await expect(validateObject(ingress)).rejects.toThrow("spec.rules[0].http.paths[1].pathtype: unknown field");
    const policy = copy(named(everything, "NetworkPolicy", "rel-platform-webhooks"));
    policy.spec.egress.at(-1).to[0].ipblock = { cidr: "0.0.0.0/0" };
    await expect(validateObject(policy)).rejects.toThrow(/spec\.egress\[\d+\]\.to\[0\]\.ipblock: unknown field/);
    const monitor = copy(ofKind(everything, "ServiceMonitor")[0]!);
    monitor.spec.endpoints[0].intervall = "10s";
    await expect(validateObject(monitor)).rejects.toThrow("spec.endpoints[0].intervall: unknown field");
    await expect(
      validateObject({ apiVersion: "apps/v1", kind: "StatefulSet", metadata: { name: "x" } }),
    ).rejects.toThrow("no model for apps/v1/StatefulSet");
  }, 30_000);

  it("refuses a misspelt value at any level of values.schema.json, for helm template and helm lint alike", async () => {
    await expect(render(sets("gatway.replicaCount=3"))).rejects.toThrow("additional properties 'gatway' not allowed");
    await expect(render(sets("ingress.hots=x"))).rejects.toThrow(
      "at '/ingress': additional properties 'hots' not allowed",
    );
    await expect(render(sets("networkPolicy.postgres.cidr=10.0.0.0/8"))).rejects.toThrow(
      "at '/networkPolicy/postgres': additional properties 'cidr' not allowed",
    );
    await expect(render(sets("catalog.image.tga=2"))).rejects.toThrow("additional properties 'tga' not allowed");
    await expect(render(sets("webhooks.autoscaling.enabeld=true"))).rejects.toThrow(
      "additional properties 'enabeld' not allowed",
    );
    await expect(render(sets("gateway.resources.limits.cpus=1"))).rejects.toThrow(
      "additional properties 'cpus' not allowed",
    );
    await expect(render(sets("gateway.autoscaling.targetCPUUtilizationPercentage=150"))).rejects.toThrow(
      "targetCPUUtilizationPercentage",
    );
    const lint = await run(helm, ["lint", "--strict", chart, "--set", "gatway.replicaCount=3"]).then(
      () => "passed",
      (error: { stdout: string; stderr: string }) => `${error.stdout}${error.stderr}`,
    );
    expect(lint).toContain("additional properties 'gatway' not allowed");
    expect(lint).toContain("1 chart(s) linted, 1 chart(s) failed");
  });

  it("documents every value in values.yaml with a ## @param, and documents no value that does not exist", async () => {
    const text = await readFile(join(chart, "values.yaml"), "utf8");
    const params = [...text.matchAll(/^## @param (\S+) \S/gm)].map((m) => m[1]!);
    const leaves: string[] = [];
    const walk = (value: unknown, path: string) => {
      if (value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length > 0) {
        for (const [key, inner] of Object.entries(value)) walk(inner, path === "" ? key : `${path}.${key}`);
      } else leaves.push(path);
    };
    walk(parse(text), "");
    const documented = (leaf: string) => params.some((p) => leaf === p || leaf.startsWith(`${p}.`));
    expect(leaves.filter((leaf) => !documented(leaf))).toEqual([]);
    const exists = (param: string) => leaves.some((leaf) => leaf === param || leaf.startsWith(`${param}.`));
    expect(params.filter((param) => !exists(param))).toEqual([]);
    expect(new Set(params).size).toBe(params.length);
  });

  it("has additionalProperties at every object level of values.schema.json: false, or a typed map for free-form names", async () => {
    const schema = JSON.parse(await readFile(join(chart, "values.schema.json"), "utf8"));
    const maps: string[] = [];
    const open: string[] = [];
    const walk = (node: any, path: string) => {
      if (node === null || typeof node !== "object") return;
      if (node.$ref) return;
      if (node.type === "object" || (Array.isArray(node.type) && node.type.includes("object")) || node.properties) {
        if (node.additionalProperties === false) {
          // strict
        } else if (typeof node.additionalProperties === "object" && node.additionalProperties.type) maps.push(path);
        else if (path !== "/properties/global") open.push(path);
      }
      for (const [key, inner] of Object.entries(node)) {
        if (Array.isArray(inner)) inner.forEach((item, i) => walk(item, `${path}/${key}/${i}`));
        else if (key !== "additionalProperties" || typeof inner === "object") walk(inner, `${path}/${key}`);
      }
    };
    walk(schema, "");
    expect(open).toEqual([]);
    expect(maps.sort()).toEqual(
      [
        "/definitions/env",
        "/definitions/labelSelector/properties/matchLabels",
        "/properties/ingress/properties/annotations",
        "/properties/prometheusRule/properties/labels",
        ...services.map((s) => `/properties/${s}/properties/serviceAccount/properties/annotations`),
      ].sort(),
    );
  });

  it("gives each service its own image; <svc>.image.tag changes that service's image alone", async () => {
    const images = (objects: K8sObject[]) =>
      Object.fromEntries(
        workloads(objects).map((w) => [w.metadata.name, w.spec.template.spec.containers[0].image as string]),
      );
    expect(images(defaults)).toEqual(
      Object.fromEntries(
        services.flatMap((s) => [
          [`rel-platform-${s}`, `ghcr.io/example/platform/${s}:0.1.0`],
          [`rel-platform-${s}-migrate`, `ghcr.io/example/platform/${s}:0.1.0`],
        ]),
      ),
    );
    const changed = images(await render(sets("catalog.image.tag=2.0.0")));
    const expected = {
      ...images(defaults),
      "rel-platform-catalog": "ghcr.io/example/platform/catalog:2.0.0",
      "rel-platform-catalog-migrate": "ghcr.io/example/platform/catalog:2.0.0",
    };
    expect(changed).toEqual(expected);
    const moved = await render(
      sets(
        "notify.image.registry=registry.example.com/team",
        "notify.image.repository=notify-svc",
        "notify.image.pullPolicy=Always",
      ),
    );
    const notify = deploymentOf(moved, "notify").spec.template.spec.containers[0];
    expect([notify.image, notify.imagePullPolicy]).toEqual(["registry.example.com/team/notify-svc:0.1.0", "Always"]);
    expect(deploymentOf(moved, "gateway").spec.template.spec.containers[0].imagePullPolicy).toBe("IfNotPresent");
    expect(deploymentOf(moved, "catalog").metadata.labels!["app.kubernetes.io/version"]).toBe("0.1.0");
  });

  it("defaults each image tag to the service's own version from Chart.yaml's annotations, not the appVersion", async () => {
    const copyDir = await mkdtemp(join(tmpdir(), "chart-"));
    try {
      await cp(chart, copyDir, { recursive: true });
      const chartYaml = join(copyDir, "Chart.yaml");
      const text = (await readFile(chartYaml, "utf8"))
        .replace(/^appVersion: .*$/m, 'appVersion: "9.9.9"')
        .replace(/platform\/catalog-version: .*/, 'platform/catalog-version: "3.4.5"');
      await writeFile(chartYaml, text);
      const objects = await render([], copyDir);
      expect(deploymentOf(objects, "catalog").spec.template.spec.containers[0].image).toBe(
        "ghcr.io/example/platform/catalog:3.4.5",
      );
      expect(deploymentOf(objects, "catalog").metadata.labels!["app.kubernetes.io/version"]).toBe("3.4.5");
      expect(deploymentOf(objects, "gateway").spec.template.spec.containers[0].image).toBe(
        "ghcr.io/example/platform/gateway:0.1.0",
      );
      await writeFile(chartYaml, text.replace(/^\s+platform\/notify-version: .*\n/m, ""));
      await expect(render([], copyDir)).rejects.toThrow("Chart.yaml lacks the annotation platform/notify-version");
    } finally {
      await rm(copyDir, { recursive: true, force: true });
    }
    const annotations = parse(await readFile(join(chart, "Chart.yaml"), "utf8")).annotations;
    for (const service of services)
      expect(annotations[`platform/${service}-version`], service).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("runs every pod under its own ServiceAccount with no token mounted", () => {
    for (const objects of [defaults, everything]) {
      const accounts = new Map(ofKind(objects, "ServiceAccount").map((a) => [a.metadata.name, a]));
      for (const workload of workloads(objects)) {
        const pod = workload.spec.template.spec;
        expect(pod.serviceAccountName, workload.metadata.name).toBe(workload.metadata.name);
        expect(pod.automountServiceAccountToken, workload.metadata.name).toBe(false);
        expect(accounts.get(pod.serviceAccountName)?.automountServiceAccountToken).toBe(false);
      }
      expect([...accounts.keys()].sort()).toEqual(
        workloads(objects)
          .map((w) => w.metadata.name)
          .sort(),
      );
    }
    // The migrate Job's account is a hook created before the Job: it exists for the pre-install Job.
    for (const service of services) {
      const account = named(defaults, "ServiceAccount", `rel-platform-${service}-migrate`);
      const job = named(defaults, "Job", `rel-platform-${service}-migrate`);
      expect(account.metadata.annotations!["helm.sh/hook"]).toBe(job.metadata.annotations!["helm.sh/hook"]);
      expect(Number(account.metadata.annotations!["helm.sh/hook-weight"])).toBeLessThan(
        Number(job.metadata.annotations!["helm.sh/hook-weight"]),
      );
      expect(named(defaults, "ServiceAccount", `rel-platform-${service}`).metadata.annotations).toBeUndefined();
    }
  });

  it("uses a given ServiceAccount when told not to create one, and refuses create=false without a name", async () => {
    const objects = await render(sets("catalog.serviceAccount.create=false", "catalog.serviceAccount.name=catalog-sa"));
    expect(deploymentOf(objects, "catalog").spec.template.spec.serviceAccountName).toBe("catalog-sa");
    expect(named(objects, "Job", "rel-platform-catalog-migrate").spec.template.spec.serviceAccountName).toBe(
      "catalog-sa",
    );
    expect(ofKind(objects, "ServiceAccount").map((a) => a.metadata.name)).not.toContain("rel-platform-catalog");
    await expect(render(sets("catalog.serviceAccount.create=false"))).rejects.toThrow(
      "catalog.serviceAccount.name is required when catalog.serviceAccount.create is false",
    );
  });

  it("scales with an autoscaling/v2 HPA when asked, and the Deployment then leaves replicas to it", async () => {
    for (const service of services) {
      expect(deploymentOf(defaults, service).spec.replicas, service).toBe(2);
      expect("replicas" in deploymentOf(everything, service).spec, service).toBe(false);
      const hpa = named(everything, "HorizontalPodAutoscaler", `rel-platform-${service}`);
      expect(hpa.apiVersion).toBe("autoscaling/v2");
      expect(hpa.spec.scaleTargetRef).toEqual({
        apiVersion: "apps/v1",
        kind: "Deployment",
        name: `rel-platform-${service}`,
      });
    }
    expect(named(everything, "HorizontalPodAutoscaler", "rel-platform-gateway").spec).toMatchObject({
      minReplicas: 3,
      maxReplicas: 12,
      metrics: [
        { type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 60 } } },
      ],
    });
    const one = await render(sets("webhooks.autoscaling.enabled=true"));
    expect(ofKind(one, "HorizontalPodAutoscaler").map(component)).toEqual(["webhooks"]);
    expect("replicas" in deploymentOf(one, "webhooks").spec).toBe(false);
    expect(deploymentOf(one, "catalog").spec.replicas).toBe(2);
    await expect(
      render(sets("webhooks.autoscaling.enabled=true", "webhooks.resources.requests.cpu=null")),
    ).rejects.toThrow("webhooks.autoscaling needs webhooks.resources.requests.cpu");
  });

  it("gives every container a startupProbe: native gRPC for the gRPC services, HTTP /healthz for the gateway", () => {
    for (const service of services) {
      const container = deploymentOf(defaults, service).spec.template.spec.containers[0];
      const probe =
        service === "gateway"
          ? { httpGet: { path: "/healthz", port: "http" } }
          : { grpc: { port: container.ports.find((p: any) => p.name === "grpc").containerPort } };
      expect(container.startupProbe, service).toEqual({
        ...probe,
        periodSeconds: 2,
        timeoutSeconds: 2,
        failureThreshold: 30,
      });
    }
  });

  it("times every liveness and readiness probe explicitly, for answers from memory: a probe fails only when the process itself is stuck", () => {
    // /readyz and grpc.health.v1 answer from state kept in memory, within 50 ms whatever the
    // downstreams do (services/gateway/test/frozen-downstream.test.ts); the kubelet's default
    // timeout of 1 s is not relied on.
    const answerWithinMs = 50;
    const timing = (probe: any) => ({
      periodSeconds: probe.periodSeconds,
      timeoutSeconds: probe.timeoutSeconds,
      failureThreshold: probe.failureThreshold,
    });
    for (const objects of [defaults, everything]) {
      for (const service of services) {
        const container = deploymentOf(objects, service).spec.template.spec.containers[0];
        const readiness = timing(container.readinessProbe);
        const liveness = timing(container.livenessProbe);
        expect(readiness, service).toEqual({ periodSeconds: 5, timeoutSeconds: 2, failureThreshold: 2 });
        expect(liveness, service).toEqual({ periodSeconds: 10, timeoutSeconds: 2, failureThreshold: 3 });
        for (const probe of [readiness, liveness]) {
          // 40 times the answer's budget, and shorter than the period: probes never overlap.
          expect(probe.timeoutSeconds * 1000, service).toBeGreaterThanOrEqual(40 * answerWithinMs);
          expect(probe.timeoutSeconds, service).toBeLessThan(probe.periodSeconds);
        }
        // A stuck pod leaves its Service (10 s) well before liveness restarts it (30 s).
        expect(readiness.periodSeconds * readiness.failureThreshold).toBeLessThan(
          liveness.periodSeconds * liveness.failureThreshold,
        );
      }
    }
  });

  it("derives every pod's shutdown from one block: SHUTDOWN_DRAIN_DELAY, SHUTDOWN_GRACE and terminationGracePeriodSeconds = drain + grace + margin, no preStop", async () => {
    const env = (container: any, name: string) => container.env.find((e: any) => e.name === name)?.value;
    const custom = await render(
      sets("shutdown.drainDelaySeconds=8", "shutdown.graceSeconds=40", "shutdown.marginSeconds=4"),
    );
    for (const [objects, drain, grace, total] of [
      [defaults, 5, 25, 35],
      [custom, 8, 40, 52],
    ] as const) {
      for (const service of services) {
        const pod = deploymentOf(objects, service).spec.template.spec;
        const container = pod.containers[0];
        expect(
          {
            drain: env(container, "SHUTDOWN_DRAIN_DELAY"),
            grace: env(container, "SHUTDOWN_GRACE"),
            total: pod.terminationGracePeriodSeconds,
            lifecycle: container.lifecycle,
          },
          service,
        ).toEqual({ drain: `${drain}s`, grace: `${grace}s`, total, lifecycle: undefined });
      }
    }
    // The margin must leave room for the 2 s the process allows itself to close after the grace.
    await expect(render(sets("shutdown.marginSeconds=2"))).rejects.toThrow(/marginSeconds/);
  });

  it("sets resources on every container, the migrate Jobs' from their own values", async () => {
    for (const objects of [defaults, everything]) {
      for (const workload of workloads(objects)) {
        for (const container of workload.spec.template.spec.containers) {
          expect(container.resources?.requests, `${workload.metadata.name}/${container.name}`).toMatchObject({
            cpu: expect.any(String),
            memory: expect.any(String),
          });
          expect(container.resources.limits?.memory, `${workload.metadata.name}/${container.name}`).toBeTruthy();
        }
      }
    }
    const objects = await render(sets("catalog.migrateResources.requests.cpu=300m"));
    expect(named(objects, "Job", "rel-platform-catalog-migrate").spec.template.spec.containers[0].resources).toEqual({
      requests: { cpu: "300m", memory: "128Mi" },
      limits: { memory: "256Mi" },
    });
    expect(deploymentOf(objects, "catalog").spec.template.spec.containers[0].resources.requests.cpu).toBe("100m");
  });

  it("keeps the migrate Jobs' pods out of every Service, PDB and Deployment selector", () => {
    const selectors = [
      ...ofKind(everything, "Service").map((s) => s.spec.selector as Record<string, string>),
      ...ofKind(everything, "PodDisruptionBudget").map((p) => p.spec.selector.matchLabels),
      ...ofKind(everything, "Deployment").map((d) => d.spec.selector.matchLabels),
    ];
    for (const job of ofKind(everything, "Job")) {
      const labels = job.spec.template.metadata.labels;
      expect(labels["app.kubernetes.io/component"]).toBe(`${component(job)}-migrate`);
      for (const selector of selectors) expect(matches(selector, labels), JSON.stringify(selector)).toBe(false);
    }
  });

  it("takes DATABASE_URL, NATS_URL, SECRETS_KEY and the WhatsApp token only from Secrets", async () => {
    const secretNames = [
      "DATABASE_URL",
      "NATS_URL",
      "SECRETS_KEY",
      "WHATSAPP_ACCESS_TOKEN",
      "WHATSAPP_APP_SECRET",
      "WHATSAPP_VERIFY_TOKEN",
    ];
    const refs = new Map<string, unknown>();
    for (const workload of workloads(everything)) {
      for (const e of workload.spec.template.spec.containers[0].env as {
        name: string;
        value?: string;
        valueFrom?: any;
      }[]) {
        if (!secretNames.includes(e.name)) continue;
        expect(e.value, `${workload.metadata.name} ${e.name}`).toBeUndefined();
        expect(Object.keys(e.valueFrom), `${workload.metadata.name} ${e.name}`).toEqual(["secretKeyRef"]);
        refs.set(e.name, e.valueFrom.secretKeyRef);
      }
    }
    expect(Object.fromEntries(refs)).toEqual({
      DATABASE_URL: { name: "platform-database", key: "url" },
      NATS_URL: { name: "platform-nats", key: "url" },
      SECRETS_KEY: { name: "platform-secrets", key: "secrets-key" },
      WHATSAPP_ACCESS_TOKEN: { name: "whatsapp", key: "access-token" },
      WHATSAPP_APP_SECRET: { name: "whatsapp-app", key: "app-secret" },
      WHATSAPP_VERIFY_TOKEN: { name: "whatsapp-app", key: "verify-token" },
    });
    expect(ofKind(everything, "Secret")).toEqual([]);
    expect(ofKind(everything, "ConfigMap")).toEqual([]);
    expect(JSON.stringify(everything)).not.toMatch(/postgres(ql)?:\/\/|nats:\/\//);
    for (const name of secretNames) {
      await expect(render(sets(`catalog.env.${name}=x`)), name).rejects.toThrow(`invalid propertyName '${name}'`);
    }
    const nats = await render(sets("nats.existingSecret=bus", "nats.secretKey=nats-url"));
    const env = deploymentOf(nats, "notify").spec.template.spec.containers[0].env;
    expect(env.find((e: any) => e.name === "NATS_URL")).toEqual({
      name: "NATS_URL",
      valueFrom: { secretKeyRef: { name: "bus", key: "nats-url" } },
    });
  });

  it("exports spans to tracing.otlpEndpoint with the sampler settings and each service's name, and sets no OTEL variable without an endpoint", async () => {
    const otelOf = (objects: K8sObject[], service: string) =>
      Object.fromEntries(
        (deploymentOf(objects, service).spec.template.spec.containers[0].env as { name: string; value?: string }[])
          .filter((e) => e.name.startsWith("OTEL_"))
          .map((e) => [e.name, e.value]),
      );
    for (const service of services) {
      expect(otelOf(defaults, service), service).toEqual({});
      expect(otelOf(everything, service), service).toEqual({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel-collector.observability:4318",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25",
        // tracing.serviceNames overrides a service's name (all-on-values.yaml: notify only).
        OTEL_SERVICE_NAME: service === "notify" ? "notify-eu" : service,
      });
    }
    // The chart's own OTEL_* variables cannot also be set through a service's env map (no duplicates).
    for (const name of ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_SERVICE_NAME"]) {
      await expect(render(sets(`catalog.env.${name}=x`)), name).rejects.toThrow(`invalid propertyName '${name}'`);
    }
    await expect(render(sets("tracing.serviceNames.mailer=x"))).rejects.toThrow("mailer");
    // What the chart sets is what every service's configuration accepts.
    const { loadConfig } = (await import(join(root, "packages", "service-kit", "dist", "src", "config.js"))) as {
      loadConfig: (schema: unknown, env: Record<string, string>) => Record<string, unknown>;
    };
    const { tracingSettings } = (await import(join(root, "packages", "service-kit", "dist", "src", "tracing.js"))) as {
      tracingSettings: Record<string, unknown>;
    };
    const { z } = await import("zod");
    expect(
      loadConfig(z.object(tracingSettings as never), otelOf(everything, "notify") as Record<string, string>),
    ).toEqual({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel-collector.observability:4318",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: 0.25,
      OTEL_SERVICE_NAME: "notify-eu",
    });
    await expect(render(sets("tracing.sampler=sometimes"))).rejects.toThrow("tracing.sampler");
    await expect(render(sets("tracing.otlpEndpoint=collector:4318"))).rejects.toThrow("tracing.otlpEndpoint");
    // Without networkPolicy.enabled nothing changes; with it and no endpoint, no collector rule.
    const policies = await render(
      sets(
        "networkPolicy.enabled=true",
        "networkPolicy.dns.cidrs={10.0.0.10/32}",
        "networkPolicy.postgres.cidrs={10.0.1.0/24}",
      ),
    );
    for (const p of ofKind(policies, "NetworkPolicy"))
      expect(JSON.stringify(p.spec.egress ?? []), p.metadata.name).not.toContain("4318");
  });

  it("routes only /v1/ and /api/ through the Ingress, never /readyz, /healthz or /metrics", () => {
    const ingress = ofKind(everything, "Ingress")[0]!;
    expect(ingress.spec.tls).toEqual([{ hosts: ["api.example.com"], secretName: "api-example-com-tls" }]);
    const paths = ingress.spec.rules.flatMap((r: any) => r.http.paths);
    expect(paths.map((p: any) => [p.path, p.pathType, p.backend.service.port.name])).toEqual([
      ["/v1/", "Prefix", "http"],
      ["/api/", "Prefix", "http"],
    ]);
    // Prefix matching is by path element: /v1/ matches /v1 and /v1/..., not /v10.
    const routed = (request: string) =>
      paths.some((p: any) => {
        const prefix = p.path.replace(/\/$/, "");
        return request === prefix || request.startsWith(`${prefix}/`);
      });
    for (const request of ["/readyz", "/healthz", "/metrics", "/", "/docs"])
      expect(routed(request), request).toBe(false);
    for (const request of [
      "/v1/openapi.json",
      "/api/v1/openapi.json",
      "/v1/pets",
      "/api/v1/webhooks/endpoints",
      // The WhatsApp Cloud API's signed callbacks (routes/provider-callbacks).
      "/api/v1/providers/whatsapp/callbacks",
    ])
      expect(routed(request), request).toBe(true);
  });

  it("tells the installer which Secrets must exist and what the Ingress exposes (NOTES.txt)", async () => {
    const { stdout } = await run(helm, ["install", "rel", chart, "--dry-run=client", "-f", allOn], {
      maxBuffer: 32 << 20,
    });
    const notes = stdout.slice(stdout.indexOf("NOTES:"));
    for (const line of [
      "catalog: registry.example.com/catalog-team/catalog:2.0.0, 2-6 replicas (HPA at 75% CPU)",
      "gateway: ghcr.io/example/platform/gateway:0.1.0, 3-12 replicas (HPA at 60% CPU)",
      "and at https://api.example.com.",
      "The Ingress routes /v1/ and /api/ only",
      "platform-database (key url): the Postgres URL (DATABASE_URL)",
      "platform-nats (key url): the NATS JetStream URL (NATS_URL)",
      "platform-secrets (key secrets-key): SECRETS_KEY",
      "whatsapp (key access-token): the WhatsApp access token",
      "whatsapp-app (keys app-secret, verify-token): the WhatsApp app secret and webhook verify token",
      "NetworkPolicies: default deny",
    ])
      expect(notes).toContain(line);
  });

  describe("NetworkPolicies", () => {
    const policy = (name: string) => named(everything, "NetworkPolicy", name);
    const releasePods = { "app.kubernetes.io/name": "platform", "app.kubernetes.io/instance": "rel" };
    const podsOf = (service: string) => ({ ...releasePods, "app.kubernetes.io/component": service });
    const dns = [
      { ipBlock: { cidr: "169.254.20.10/32" } },
      {
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } },
        podSelector: { matchLabels: { "k8s-app": "kube-dns" } },
      },
    ];
    const postgres = [
      { ipBlock: { cidr: "10.20.0.0/24" } },
      {
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "databases" } },
        podSelector: { matchLabels: { "cnpg.io/cluster": "platform" } },
      },
    ];
    const nats = [
      {
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "nats" } },
        podSelector: { matchLabels: { "app.kubernetes.io/name": "nats" } },
      },
    ];
    const prometheus = [
      {
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } },
        podSelector: { matchLabels: { "app.kubernetes.io/name": "prometheus" } },
      },
    ];
    const basics = [
      {
        to: dns,
        ports: [
          { protocol: "UDP", port: 53 },
          { protocol: "TCP", port: 53 },
        ],
      },
      { to: postgres, ports: [{ protocol: "TCP", port: 5432 }] },
    ];
    // The all-on values set tracing.otlpEndpoint: every service may reach the collector.
    const collector = {
      to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "observability" } } }],
      ports: [{ protocol: "TCP", port: 4318 }],
    };

    it("denies all ingress and egress of the release's pods by default", () => {
      expect(policy("rel-platform-default-deny").spec).toEqual({
        podSelector: { matchLabels: releasePods },
        policyTypes: ["Ingress", "Egress"],
      });
      for (const workload of workloads(everything))
        expect(matches(releasePods, workload.spec.template.metadata.labels)).toBe(true);
    });

    it("admits the gateway's HTTP port from the ingress controller only, and egress to DNS, Postgres and the three services", () => {
      const gateway = policy("rel-platform-gateway").spec;
      expect(gateway.podSelector).toEqual({ matchLabels: podsOf("gateway") });
      expect(gateway.ingress).toEqual([
        {
          from: [
            {
              namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ingress-nginx" } },
              podSelector: { matchLabels: { "app.kubernetes.io/name": "ingress-nginx" } },
            },
          ],
          ports: [{ protocol: "TCP", port: 8080 }],
        },
        { from: prometheus, ports: [{ protocol: "TCP", port: 9464 }] },
      ]);
      expect(gateway.egress).toEqual([
        ...basics,
        ...grpcServices.map((s, i) => ({
          to: [{ podSelector: { matchLabels: podsOf(s) } }],
          ports: [{ protocol: "TCP", port: 50051 + i }],
        })),
        collector,
      ]);
    });

    it("admits each gRPC service from the gateway only (they do not call one another) and its metrics from Prometheus", async () => {
      // The only *_ADDR settings, i.e. the only gRPC clients, are the gateway's.
      for (const service of grpcServices) {
        const config = await readFile(join(root, "services", service, "src", "config.ts"), "utf8");
        const main = await readFile(join(root, "services", service, "src", "main.ts"), "utf8");
        expect(`${config}${main}`, service).not.toMatch(/_ADDR\b/);
      }
      grpcServices.forEach((service, i) => {
        expect(policy(`rel-platform-${service}`).spec.ingress, service).toEqual([
          {
            from: [{ podSelector: { matchLabels: podsOf("gateway") } }],
            ports: [{ protocol: "TCP", port: 50051 + i }],
          },
          { from: prometheus, ports: [{ protocol: "TCP", port: 9465 + i }] },
        ]);
      });
    });

    it("lets catalog reach DNS and Postgres only, notify also NATS (and WhatsApp over HTTPS), webhooks also NATS and HTTPS to public addresses", () => {
      expect(policy("rel-platform-catalog").spec.egress).toEqual([...basics, collector]);
      const publicHttps = (ports: unknown[]) => ({ to: publicPeers, ports });
      const publicPeers = policy("rel-platform-webhooks").spec.egress.at(-1).to;
      expect(policy("rel-platform-notify").spec.egress).toEqual([
        ...basics,
        collector,
        { to: nats, ports: [{ protocol: "TCP", port: 4222 }] },
        publicHttps([{ protocol: "TCP", port: 443 }]),
      ]);
      expect(policy("rel-platform-webhooks").spec.egress).toEqual([
        ...basics,
        collector,
        { to: nats, ports: [{ protocol: "TCP", port: 4222 }] },
        publicHttps([
          { protocol: "TCP", port: 443 },
          { protocol: "TCP", port: 8443 },
          { protocol: "TCP", port: 9000, endPort: 9100 },
        ]),
      ]);
      expect(publicPeers.map((p: any) => p.ipBlock.cidr)).toEqual(["0.0.0.0/0", "::/0"]);
      expect(policy("rel-platform-migrate").spec).toEqual({
        podSelector: {
          matchLabels: releasePods,
          matchExpressions: [
            {
              key: "app.kubernetes.io/component",
              operator: "In",
              values: services.map((s) => `${s}-migrate`),
            },
          ],
        },
        policyTypes: ["Egress"],
        egress: basics,
      });
    });

    it("sets WEBHOOKS_ALLOWED_PORTS from the same list as the policy's ports, in the form the service parses", async () => {
      const env = deploymentOf(everything, "webhooks").spec.template.spec.containers[0].env;
      const allowed = env.find((e: any) => e.name === "WEBHOOKS_ALLOWED_PORTS").value as string;
      expect(allowed).toBe("443,8443,9000-9100");
      const domain = join(root, "services", "webhooks", "src", "domain", "target-address.ts");
      const { parseAllowedPorts } = (await import(domain)) as {
        parseAllowedPorts: (t: string) => { ranges: [number, number][] };
      };
      const ports = policy("rel-platform-webhooks")
        .spec.egress.at(-1)
        .ports.map((p: any) => [p.port, p.endPort ?? p.port]);
      const distinct = (ranges: number[][]) => [...new Set(ranges.map((r) => r.join("-")))];
      expect(distinct(parseAllowedPorts(allowed).ranges)).toEqual(distinct(ports));
      // One list for both: the env var cannot be set on its own.
      await expect(render(sets("webhooks.env.WEBHOOKS_ALLOWED_PORTS=8443"))).rejects.toThrow(
        "invalid propertyName 'WEBHOOKS_ALLOWED_PORTS'",
      );
      const none = deploymentOf(defaults, "webhooks").spec.template.spec.containers[0].env;
      expect(none.map((e: any) => e.name)).not.toContain("WEBHOOKS_ALLOWED_PORTS");
    });

    it("refuses exactly the addresses the webhooks service refuses (services/webhooks/src/domain/target-address.ts)", async () => {
      const domain = join(root, "services", "webhooks", "src", "domain", "target-address.ts");
      const source = await readFile(domain, "utf8");
      const listed = (name: string) => {
        const body = new RegExp(
          `const ${name}: \\[AddressClass, string, number\\]\\[\\] = \\[([\\s\\S]*?)\\n\\];`,
        ).exec(source)![1]!;
        return [...body.matchAll(/\["\w+", "([0-9a-f:.]+)", (\d+)\]/g)].map((m) => `${m[1]}/${m[2]}`);
      };
      const [v4, v6] = policy("rel-platform-webhooks")
        .spec.egress.at(-1)
        .to.map((p: any) => p.ipBlock.except);
      expect(listed("v4")).toHaveLength(16);
      expect(v4).toEqual(listed("v4"));
      // IPv6 also leaves out NAT64 and 6to4, whose embedded IPv4 address only the code can check.
      expect(v6).toEqual([...listed("v6"), "64:ff9b::/96", "2002::/16"]);

      // And the code agrees with the list: each range's first and last address are refused, the
      // addresses just outside are public unless another listed range holds them.
      const { classifyAddress } = (await import(domain)) as { classifyAddress: (a: string) => string | null };
      const toInt = (ip: string) => ip.split(".").reduce((n, octet) => n * 256 + Number(octet), 0);
      const toIp = (n: number) => [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join(".");
      const ranges = (v4 as string[]).map((cidr) => {
        const [ip, bits] = cidr.split("/");
        const first = toInt(ip!);
        return [first, first + 2 ** (32 - Number(bits)) - 1] as const;
      });
      const listedHere = (n: number) => ranges.some(([a, b]) => n >= a && n <= b);
      for (const [first, last] of ranges) {
        for (const n of [first, last]) expect(classifyAddress(toIp(n)), toIp(n)).not.toBeNull();
        for (const n of [first - 1, last + 1].filter((x) => x >= 0 && x < 2 ** 32 && !listedHere(x)))
          expect(classifyAddress(toIp(n)), toIp(n)).toBeNull();
      }
      for (const ip of ["8.8.8.8", "1.1.1.1", "93.184.215.14"]) expect(classifyAddress(ip)).toBeNull();
    });

    it("needs to be told where Postgres runs: an empty peer block fails rather than allow every address", async () => {
      await expect(render(sets("networkPolicy.enabled=true"))).rejects.toThrow(
        "networkPolicy.postgres needs cidrs, a namespaceSelector or a podSelector",
      );
      const objects = await render(sets("networkPolicy.enabled=true", "networkPolicy.postgres.cidrs={10.0.0.0/16}"));
      for (const p of ofKind(objects, "NetworkPolicy")) {
        for (const rule of [...(p.spec.ingress ?? []), ...(p.spec.egress ?? [])]) {
          const peers = rule.from ?? rule.to;
          expect(peers.length, p.metadata.name).toBeGreaterThan(0);
          for (const peer of peers) expect(Object.keys(peer).length, p.metadata.name).toBeGreaterThan(0);
        }
      }
      // Without WhatsApp, notify reaches no address outside the cluster's services.
      expect(
        named(objects, "NetworkPolicy", "rel-platform-notify").spec.egress.map((r: any) => r.ports[0].port),
      ).toEqual([53, 5432, 4222]);
    });
  });
});
