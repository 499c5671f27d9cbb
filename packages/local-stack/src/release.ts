/**
 * `npm run -s release -- <component> <version>`: cuts a release of one service (catalog, notify,
 * webhooks, gateway) or of the proto contracts, in two steps (see cutRelease in releases.ts and
 * docs/operations.md, "Releases"). Prints what it did and the next step as one JSON line.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { cutRelease, isReleasedComponent, releasedComponents } from "./releases.js";

const repo = join(import.meta.dirname, "..", "..", "..", "..");
const [component, version, ...rest] = process.argv.slice(2);

if (component === undefined || version === undefined || rest.length > 0 || !isReleasedComponent(component)) {
  process.stderr.write(`usage: npm run -s release -- <${releasedComponents.join("|")}> <MAJOR.MINOR.PATCH>\n`);
  process.exit(2);
}
try {
  const result = await cutRelease(repo, component, version);
  // A service's version is also its image's org.opencontainers.image.version label: the bump
  // regenerates the Dockerfiles (deploy/docker/generate.js) so they are committed with it.
  if (result.step === "bumped") execFileSync(process.execPath, [join(repo, "deploy", "docker", "generate.js")]);
  process.stdout.write(`${JSON.stringify(result)}\n`);
} catch (error) {
  process.stderr.write(`${JSON.stringify({ error: (error as Error).message })}\n`);
  process.exit(1);
}
