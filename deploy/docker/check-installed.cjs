// Run by each image's build after `npm ci` (bind-mounted, never copied into the image):
//   node check-installed.cjs <workspace dir>...
// Every dependency those workspaces' package.json files name must have its package.json under the
// workspace's or the root's node_modules. An install that went wrong and still exited 0 fails the
// build here, naming what is missing, instead of the image's first start. (devDependencies are
// not checked: they name workspaces the image never holds; the build stage's compiler is checked
// by `npx --no-install tsc`.)
"use strict";
const fs = require("node:fs");

const missing = process.argv.slice(2).flatMap((dir) => {
  const manifest = JSON.parse(fs.readFileSync(`${dir}/package.json`, "utf8"));
  const names = Object.keys(manifest.dependencies ?? {});
  return names
    .filter(
      (name) => ![`${dir}/node_modules`, "node_modules"].some((at) => fs.existsSync(`${at}/${name}/package.json`)),
    )
    .map((name) => `${dir}: ${name}`);
});
if (missing.length > 0) {
  console.error(`npm ci left out: ${missing.join(", ")}`);
  process.exit(1);
}
