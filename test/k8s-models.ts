/**
 * Validates rendered Kubernetes objects against the schemas the `kubernetes-models` packages ship:
 * each object is built with its model class and `.validate()`d (types, formats, required fields,
 * enums), and, because those validators let unknown fields through, walked against the model's
 * TypeScript definition (the same OpenAPI schema, as the package's .d.ts files spell it) so that
 * a field the API does not know (`startupprobe`, `pathtype`) is refused as the API server's strict
 * field validation would refuse it.
 */
import { join } from "node:path";
import ts from "typescript";

const root = join(import.meta.dirname, "..");

/** apiVersion/kind → the module of its model (kubernetes-models layout) and the model's interface. */
const models: Record<string, string> = {
  "v1/ServiceAccount": "kubernetes-models/v1/ServiceAccount",
  "v1/Service": "kubernetes-models/v1/Service",
  "v1/ConfigMap": "kubernetes-models/v1/ConfigMap",
  "v1/Secret": "kubernetes-models/v1/Secret",
  "apps/v1/Deployment": "kubernetes-models/apps/v1/Deployment",
  "batch/v1/Job": "kubernetes-models/batch/v1/Job",
  "policy/v1/PodDisruptionBudget": "kubernetes-models/policy/v1/PodDisruptionBudget",
  "autoscaling/v2/HorizontalPodAutoscaler": "kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler",
  "networking.k8s.io/v1/Ingress": "kubernetes-models/networking.k8s.io/v1/Ingress",
  "networking.k8s.io/v1/NetworkPolicy": "kubernetes-models/networking.k8s.io/v1/NetworkPolicy",
  "monitoring.coreos.com/v1/ServiceMonitor":
    "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor",
  "monitoring.coreos.com/v1/PrometheusRule":
    "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule",
};

export interface KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata?: { name?: string };
  [field: string]: unknown;
}

interface ModelClass {
  new (data: unknown): { validate(): void };
}

let program: { checker: ts.TypeChecker; types: Map<string, ts.Type> } | undefined;

/** One TypeScript program over the models' type definitions, built once (a second or two). */
function definitions() {
  if (program) return program;
  const file = join(root, "test", "__kubernetes_models__.ts");
  const keys = Object.keys(models);
  const text =
    keys.map((key, i) => `import type { I${key.split("/").pop()} as T${i} } from "${models[key]}";`).join("\n") +
    `\nexport interface Models {\n${keys.map((key, i) => `  "${key}": T${i};`).join("\n")}\n}\n`;
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, ...rest) =>
    name === file ? ts.createSourceFile(name, text, version) : getSourceFile(name, version, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  const created = ts.createProgram([file], options, host);
  const unresolved = ts.getPreEmitDiagnostics(created).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
  if (unresolved.length > 0) throw new Error(`the models' type definitions do not load: ${unresolved.join("; ")}`);
  const checker = created.getTypeChecker();
  const source = created.getSourceFile(file)!;
  const declaration = source.statements.find(ts.isInterfaceDeclaration)!;
  const modelsType = checker.getTypeAtLocation(declaration);
  const types = new Map<string, ts.Type>();
  for (const key of keys) types.set(key, checker.getTypeOfSymbol(modelsType.getProperty(key)!));
  program = { checker, types };
  return program;
}

/** Fields of `value` that the schema `type` does not have, as JSON paths (`spec.template...`). */
function unknownFields(checker: ts.TypeChecker, value: unknown, type: ts.Type, path: string, out: string[]) {
  if (value === null || value === undefined || typeof value !== "object") return;
  const defined = checker.getNonNullableType(type);
  if (defined.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return;
  if (Array.isArray(value)) {
    const element = checker.getIndexTypeOfType(defined, ts.IndexKind.Number);
    if (!element) {
      out.push(`${path}: a list where the schema has ${checker.typeToString(defined)}`);
      return;
    }
    value.forEach((item, i) => unknownFields(checker, item, element, `${path}[${i}]`, out));
    return;
  }
  const shapes = defined.isUnion() ? defined.types.filter((t) => t.flags & ts.TypeFlags.Object) : [defined];
  if (shapes.length === 0) {
    out.push(`${path}: an object where the schema has ${checker.typeToString(defined)}`);
    return;
  }
  for (const [key, field] of Object.entries(value)) {
    const at = path === "" ? key : `${path}.${key}`;
    const property = shapes.map((shape) => shape.getProperty(key)).find((p) => p !== undefined);
    if (property) {
      unknownFields(checker, field, checker.getTypeOfSymbol(property), at, out);
      continue;
    }
    const index = shapes
      .map((shape) => checker.getIndexTypeOfType(shape, ts.IndexKind.String))
      .find((t) => t !== undefined);
    if (index) unknownFields(checker, field, index, at, out);
    else out.push(`${at}: unknown field`);
  }
}

/**
 * Throws unless the object is valid for its kind: a model exists for it, its `.validate()` passes
 * and it has no field its schema lacks. The message names the object and every problem.
 */
export async function validateObject(object: KubernetesObject): Promise<void> {
  const key = `${object.apiVersion}/${object.kind}`;
  const name = `${object.kind} ${object.metadata?.name ?? "(unnamed)"}`;
  const module = models[key];
  if (!module) throw new Error(`${name}: no model for ${key}; add it to test/k8s-models.ts`);
  const exported = (await import(module)) as Record<string, ModelClass>;
  const Model = exported[object.kind]!;
  try {
    new Model(object).validate();
  } catch (error) {
    throw new Error(`${name}: ${(error as Error).message}`, { cause: error });
  }
  const { checker, types } = definitions();
  const problems: string[] = [];
  unknownFields(checker, object, types.get(key)!, "", problems);
  if (problems.length > 0) throw new Error(`${name}: ${problems.join("; ")}`);
}
