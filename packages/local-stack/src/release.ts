/**
 * `npm run -s release -- <component> <version>`: cuts a release of one service (catalog, notify,
 * webhooks, gateway) or of the proto contracts, in two steps (see cutRelease in releases.ts and
 * docs/operations.md, "Releases"). Prints what it did and the next step as one JSON line.
 */
import { join } from "node:path";
import { cutRelease, isReleasedComponent, releasedComponents } from "./releases.js";

const repo = join(import.meta.dirname, "..", "..", "..", "..");
const [component, version, ...rest] = process.argv.slice(2);

if (component === undefined || version === undefined || rest.length > 0 || !isReleasedComponent(component)) {
  process.stderr.write(`usage: npm run -s release -- <${releasedComponents.join("|")}> <MAJOR.MINOR.PATCH>\n`);
  process.exit(2);
}
try {
  process.stdout.write(`${JSON.stringify(await cutRelease(repo, component, version))}\n`);
} catch (error) {
  process.stderr.write(`${JSON.stringify({ error: (error as Error).message })}\n`);
  process.exit(1);
}
