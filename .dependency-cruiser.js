// @ts-check
// Import rules of the monorepo, checked by dependency-cruiser (`npm run deps`, part of `npm test`).
// test/dependency-rules.test.ts proves that each rule reports what it is meant to.
//
// A service's source is layered, outermost first:
//   main.ts, migrate.ts, cli/       entry points: wire everything, imported by nothing
//   grpc/ events/ delivery/ channel/ http/ routes/ console/
//                                   adapters: transport, broker, outbound calls
//   db/                             storage: all of the service's SQL
//   domain/                         plain functions and types
// A folder imports only folders below it (and, among the adapters, two folders never import
// each other both ways). config.ts stands aside: it is parsed once and handed down.

/**
 * A package in node_modules, also matched when it cannot be resolved (a bare name).
 * @param {string} name
 */
const npmPackage = (name) => `(^|node_modules/)${name}(/|$)`;

/**
 * The service's own folders, with `$1` the service name captured by the rule's `from.path`.
 * @param {string[]} folders
 */
const ownFolders = (folders) => `^services/$1/src/(${folders.join("|")})/`;

const servicePackages = "@platform/(catalog|notify|webhooks|gateway)";
const adapters = ["grpc", "events", "delivery", "channel", "http", "routes", "console"];
const entryPoints = "^services/$1/src/(main\\.ts$|migrate\\.ts$|cli/)";
// Tests beside the code exercise it from the outside: the layering binds the code, not them.
const notATest = "\\.test\\.ts$";

/** @type {import("dependency-cruiser").IConfiguration} */
export default {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "Modules do not import each other, directly or through others.",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-service-imports-another-service",
      severity: "error",
      comment: "Services talk over gRPC and NATS only; what they share lives in packages/.",
      from: { path: "^services/([^/]+)/" },
      to: { path: `^services/|${npmPackage(servicePackages)}`, pathNot: "^services/$1/" },
    },
    {
      name: "no-package-imports-a-service",
      severity: "error",
      comment: "packages/ are shared by the services and know none of them.",
      from: { path: "^packages/" },
      to: { path: `^services/|${npmPackage(servicePackages)}` },
    },
    {
      name: "domain-imports-no-transport-storage-or-broker",
      severity: "error",
      comment:
        "The domain core is plain functions and types (eslint.config.js has the same list): " +
        "no gRPC, Koa, knex, pg, NATS or generated proto code, and of service-kit only its errors, its secret box (pure AES-GCM) and its random ids.",
      from: { path: "^services/[^/]+/src/domain/" },
      to: {
        path: [
          npmPackage("(@grpc|koa|@koa|knex|pg|nats|@types/(koa|koa__[^/]+|pg)|@platform/(proto|service-kit))"),
          "^proto/",
          "^packages/service-kit/",
        ],
        pathNot: "(^packages/service-kit/(dist/)?src/|@platform/service-kit/)(errors|secret-box|random-id)(\\.|$)",
      },
    },
    {
      name: "domain-imports-no-outer-folder",
      severity: "error",
      comment: "domain/ is the innermost layer: it imports no other folder of its service.",
      from: { path: "^services/([^/]+)/src/domain/", pathNot: notATest },
      to: { path: [ownFolders(["db", ...adapters]), entryPoints] },
    },
    {
      name: "db-imports-no-outer-folder",
      severity: "error",
      comment: "db/ holds the SQL and sits under the adapters: it imports none of them, nor an entry point.",
      from: { path: "^services/([^/]+)/src/db/", pathNot: notATest },
      to: { path: [ownFolders(adapters), entryPoints] },
    },
    {
      name: "adapter-imports-no-entry-point",
      severity: "error",
      comment: "main.ts, migrate.ts and cli/ wire the service; nothing below them imports them.",
      from: { path: `^services/([^/]+)/src/(${adapters.join("|")})/`, pathNot: notATest },
      to: { path: entryPoints },
    },
    {
      name: "adapters-import-one-way",
      severity: "error",
      comment:
        "Two adapter folders of a service (grpc/, events/, delivery/, channel/, http/, routes/, console/) " +
        "never import each other both ways: one of them is the lower one.",
      scope: "folder",
      from: { path: `^services/[^/]+/src/(${adapters.join("|")})(/|$)` },
      to: { path: `^services/[^/]+/src/(${adapters.join("|")})(/|$)`, circular: true },
    },
    {
      name: "console-page-imports-no-page",
      severity: "error",
      comment:
        "A console page (console/pages/) imports no other page: what two pages share (views, a security " +
        "rule such as the password check) lives in a module of its own beside them.",
      from: { path: "^services/([^/]+)/src/console/pages/", pathNot: notATest },
      to: { path: "^services/$1/src/console/pages/" },
    },
  ],
  options: {
    // Compiled output and installed packages are leaves: their imports are not followed.
    doNotFollow: { path: ["(^|/)node_modules/", "(^|/)dist/"] },
    exclude: { path: ["^proto/gen/"] },
    // Resolve like tsc does: NodeNext, `.js` specifiers naming `.ts` files, package exports.
    tsConfig: { fileName: "tsconfig.base.json" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
    },
    skipAnalysisNotInRules: true,
    reporterOptions: { text: { highlightFocused: true } },
  },
};
