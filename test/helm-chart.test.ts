/* Rendered manifests are untyped YAML; the assertions below walk them freely. */
/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-explicit-any */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { findHelm } from "./helm-binary.js";

const run = promisify(execFile);
const chart = join(import.meta.dirname, "..", "deploy", "helm", "platform");
let helm: string;

interface K8sObject {
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Record<string, any>;
}

async function render(...sets: string[]): Promise<K8sObject[]> {
  const args = ["template", "rel", chart, ...sets.flatMap((s) => ["--set", s])];
  const { stdout } = await run(helm, args);
  return parseAllDocuments(stdout)
    .map((d) => d.toJSON() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

const ofKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const component = (o: K8sObject) => o.metadata.labels?.["app.kubernetes.io/component"];

describe("the Helm chart (real helm)", () => {
  beforeAll(async () => {
    const found = await findHelm();
    helm = found.path;
    console.log(`helm: ${found.path} (${found.version}, ${found.source === "PATH" ? "from PATH" : "bundled"})`);
  }, 60_000);

  it("passes helm lint --strict", async () => {
    const { stdout } = await run(helm, ["lint", "--strict", chart]);
    expect(stdout).toContain("0 chart(s) failed");
  });

  it("renders a Deployment, Service and PDB per service, each independently labelled", async () => {
    const objects = await render();
    for (const kind of ["Deployment", "PodDisruptionBudget"]) {
      expect(ofKind(objects, kind).map(component).sort(), kind).toEqual(["catalog", "gateway", "notify", "webhooks"]);
    }
    // A ClusterIP Service per service, and a headless one per gRPC service (the gateway's balanced targets).
    expect(
      ofKind(objects, "Service")
        .map((s) => `${component(s)}${s.spec.clusterIP === "None" ? " headless" : ""}`)
        .sort(),
    ).toEqual(["catalog", "catalog headless", "gateway", "notify", "notify headless", "webhooks", "webhooks headless"]);
    expect(ofKind(objects, "ServiceMonitor")).toHaveLength(0);
    expect(ofKind(objects, "Ingress")).toHaveLength(0);
  });

  it("probes gRPC services natively and the gateway over HTTP", async () => {
    for (const deployment of ofKind(await render(), "Deployment")) {
      const container = deployment.spec.template.spec.containers[0];
      if (component(deployment) === "gateway") {
        expect(container.readinessProbe.httpGet.path).toBe("/readyz");
        expect(container.livenessProbe.httpGet.path).toBe("/healthz");
      } else {
        expect(container.readinessProbe.grpc.port).toBe(container.ports[0].containerPort);
        expect(container.livenessProbe.grpc).toBeDefined();
      }
    }
  });

  it("runs every pod hardened and non-root", async () => {
    const objects = await render();
    for (const workload of [...ofKind(objects, "Deployment"), ...ofKind(objects, "Job")]) {
      const pod = workload.spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
      for (const container of pod.containers) {
        expect(container.securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          runAsNonRoot: true,
          capabilities: { drop: ["ALL"] },
        });
      }
    }
  });

  it("migrates in pre-install/pre-upgrade hook Jobs, not at pod start", async () => {
    const objects = await render();
    const jobs = ofKind(objects, "Job");
    expect(jobs.map(component).sort()).toEqual(["catalog", "gateway", "notify", "webhooks"]);
    for (const job of jobs) {
      expect(job.metadata.annotations?.["helm.sh/hook"]).toBe("pre-install,pre-upgrade");
      expect(job.spec.template.spec.containers[0].command).toEqual([
        "node",
        `services/${component(job)}/dist/src/migrate.js`,
      ]);
    }
    for (const deployment of ofKind(objects, "Deployment")) {
      const env = deployment.spec.template.spec.containers[0].env as { name: string; value?: string }[];
      expect(env).toContainEqual({ name: "MIGRATE_ON_START", value: "false" });
    }
  });

  it("points the gateway at every pod of catalog, notify and webhooks (dns:/// of their headless Services), and leaves the rate limit's split to the gateway", async () => {
    const gateway = ofKind(await render("gateway.replicaCount=3"), "Deployment").find(
      (d) => component(d) === "gateway",
    )!;
    const env = Object.fromEntries(
      (gateway.spec.template.spec.containers[0].env as { name: string; value?: string }[]).map((e) => [
        e.name,
        e.value,
      ]),
    );
    expect(env).toMatchObject({
      CATALOG_ADDR: "dns:///rel-platform-catalog-headless.default.svc.cluster.local:50051",
      NOTIFY_ADDR: "dns:///rel-platform-notify-headless.default.svc.cluster.local:50052",
      WEBHOOKS_ADDR: "dns:///rel-platform-webhooks-headless.default.svc.cluster.local:50053",
    });
    // The chart no longer ties the rate limit's split to replicaCount (an HPA changes the count).
    expect(env).not.toHaveProperty("GATEWAY_REPLICAS");
    expect(gateway.spec.replicas).toBe(3);
  });

  it("makes each gRPC service's headless Service select exactly its Deployment's pods on the grpc port, in the release namespace and cluster domain", async () => {
    const { stdout } = await run(helm, [
      "template",
      "rel",
      chart,
      "--namespace",
      "shop",
      "--set",
      "clusterDomain=corp.internal",
      "--set",
      "catalog.port=6000",
    ]);
    const objects = parseAllDocuments(stdout)
      .map((d) => d.toJSON() as K8sObject | null)
      .filter((o): o is K8sObject => o !== null);
    const gateway = ofKind(objects, "Deployment").find((d) => component(d) === "gateway")!;
    const env = gateway.spec.template.spec.containers[0].env as { name: string; value?: string }[];
    expect(env.find((e) => e.name === "CATALOG_ADDR")?.value).toBe(
      "dns:///rel-platform-catalog-headless.shop.svc.corp.internal:6000",
    );
    for (const service of ["catalog", "notify", "webhooks"]) {
      const headless = ofKind(objects, "Service").find((s) => s.metadata.name === `rel-platform-${service}-headless`)!;
      const deployment = ofKind(objects, "Deployment").find((d) => component(d) === service)!;
      expect(headless.spec.clusterIP).toBe("None");
      expect(headless.spec.selector).toEqual(deployment.spec.selector.matchLabels);
      const podLabels = deployment.spec.template.metadata.labels as Record<string, string>;
      for (const [k, v] of Object.entries(headless.spec.selector as Record<string, string>))
        expect(podLabels[k]).toBe(v);
      const ports = deployment.spec.template.spec.containers[0].ports as { name: string; containerPort: number }[];
      const grpcPort = ports.find((p) => p.name === "grpc")!;
      expect(headless.spec.ports).toEqual([
        { name: "grpc", port: grpcPort.containerPort, targetPort: "grpc", appProtocol: "grpc" },
      ]);
    }
  });

  it("gives the webhooks service its database URL, NATS URL and SECRETS_KEY from Secrets, never in the manifest", async () => {
    const webhooks = ofKind(await render(), "Deployment").find((d) => component(d) === "webhooks")!;
    const env = webhooks.spec.template.spec.containers[0].env as { name: string; value?: string; valueFrom?: any }[];
    expect(env).toEqual(
      expect.arrayContaining([
        { name: "DATABASE_URL", valueFrom: { secretKeyRef: { name: "platform-database", key: "url" } } },
        { name: "NATS_URL", valueFrom: { secretKeyRef: { name: "platform-nats", key: "url" } } },
        { name: "SECRETS_KEY", valueFrom: { secretKeyRef: { name: "platform-secrets", key: "secrets-key" } } },
      ]),
    );
    expect(env.find((e) => e.name === "SECRETS_KEY")?.value).toBeUndefined();
    expect(env.find((e) => e.name === "NATS_URL")?.value).toBeUndefined();
  });

  it("sets NATS_STREAM_REPLICAS from nats.streamReplicas on notify and webhooks (1 by default, 3 in the cluster example), and refuses other counts", async () => {
    const replicasOf = (objects: K8sObject[]) =>
      Object.fromEntries(
        ofKind(objects, "Deployment").map((d): [string, string | undefined] => {
          const env = d.spec.template.spec.containers[0].env as { name: string; value?: string }[];
          return [component(d) ?? "", env.find((e) => e.name === "NATS_STREAM_REPLICAS")?.value];
        }),
      );
    expect(replicasOf(await render())).toEqual({ gateway: undefined, catalog: undefined, notify: "1", webhooks: "1" });
    // deploy/helm/README.md installs the chart over its three-server NATS cluster with 3.
    const readme = await readFile(join(chart, "..", "README.md"), "utf8");
    const documented = /--set (nats\.streamReplicas=\d+)/.exec(readme)?.[1];
    expect(documented).toBe("nats.streamReplicas=3");
    expect(replicasOf(await render(documented!))).toEqual({
      gateway: undefined,
      catalog: undefined,
      notify: "3",
      webhooks: "3",
    });
    await expect(render("nats.streamReplicas=2")).rejects.toThrow(/streamReplicas/);
    await expect(render("nats.streamReplicas=7")).rejects.toThrow(/streamReplicas/);
    // One value for both services: it cannot be set per service, so their streams never flap.
    await expect(render("notify.env.NATS_STREAM_REPLICAS=3")).rejects.toThrow(
      "invalid propertyName 'NATS_STREAM_REPLICAS'",
    );
  });

  it("sends through WhatsApp only when given the access token's Secret, never putting the token in the manifest", async () => {
    const notifyEnv = async (...sets: string[]) =>
      ofKind(await render(...sets), "Deployment").find((d) => component(d) === "notify")!.spec.template.spec
        .containers[0].env as { name: string; value?: string; valueFrom?: any }[];
    expect((await notifyEnv()).map((e) => e.name)).not.toContain("WHATSAPP_ACCESS_TOKEN");
    const env = await notifyEnv("notify.whatsapp.existingSecret=wa", "notify.whatsapp.phoneNumberId=1065");
    expect(env).toEqual(
      expect.arrayContaining([
        { name: "NOTIFY_CHANNEL_PROVIDER", value: "whatsapp" },
        { name: "WHATSAPP_ACCESS_TOKEN", valueFrom: { secretKeyRef: { name: "wa", key: "access-token" } } },
        { name: "WHATSAPP_PHONE_NUMBER_ID", value: "1065" },
      ]),
    );
    await expect(render("notify.whatsapp.existingSecret=wa")).rejects.toThrow(/phoneNumberId is required/);
  });

  it("gives the gateway the WhatsApp app secret and verify token from their Secret only when one is named", async () => {
    const gatewayEnv = async (...sets: string[]) =>
      ofKind(await render(...sets), "Deployment").find((d) => component(d) === "gateway")!.spec.template.spec
        .containers[0].env as { name: string; value?: string; valueFrom?: any }[];
    const names = (await gatewayEnv()).map((e) => e.name);
    expect(names).not.toContain("WHATSAPP_APP_SECRET");
    expect(names).not.toContain("WHATSAPP_VERIFY_TOKEN");
    expect(await gatewayEnv("gateway.whatsappCallbacks.existingSecret=wa-app")).toEqual(
      expect.arrayContaining([
        { name: "WHATSAPP_APP_SECRET", valueFrom: { secretKeyRef: { name: "wa-app", key: "app-secret" } } },
        { name: "WHATSAPP_VERIFY_TOKEN", valueFrom: { secretKeyRef: { name: "wa-app", key: "verify-token" } } },
      ]),
    );
  });

  it("binds every listener in every pod to all interfaces (the services default to loopback)", async () => {
    for (const deployment of ofKind(await render(), "Deployment")) {
      const env = Object.fromEntries(
        (deployment.spec.template.spec.containers[0].env as { name: string; value?: string }[]).map((e) => [
          e.name,
          e.value,
        ]),
      );
      const hosts = component(deployment) === "gateway" ? ["HOST", "METRICS_HOST"] : ["GRPC_HOST", "METRICS_HOST"];
      for (const host of hosts) expect(env[host], `${component(deployment)} ${host}`).toBe("0.0.0.0");
    }
  });

  it("deploys each service on its own: disabling one removes all its objects", async () => {
    const objects = await render("catalog.enabled=false", "webhooks.enabled=false");
    expect(objects.filter((o) => ["catalog", "webhooks"].includes(component(o) ?? ""))).toEqual([]);
    expect(ofKind(objects, "Deployment").map(component).sort()).toEqual(["gateway", "notify"]);
  });

  it("creates ServiceMonitors and the Ingress only when enabled", async () => {
    const objects = await render("metrics.serviceMonitor.enabled=true", "ingress.enabled=true");
    expect(ofKind(objects, "ServiceMonitor")).toHaveLength(4);
    expect(ofKind(objects, "Ingress")[0]!.spec.rules[0].host).toBe("api.example.com");
  });

  it("rejects values that break the schema", async () => {
    await expect(render("gateway.replicaCount=lots")).rejects.toThrow(/replicaCount/);
    await expect(render("image.pullPolicy=Sometimes")).rejects.toThrow(/pullPolicy/);
  });
});
