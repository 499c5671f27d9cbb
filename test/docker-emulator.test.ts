// The Dockerfile emulator that test/images.test.ts trusts, on small contexts of its own: it
// copies what the builder would copy, refuses what it cannot emulate, and reports what fails.
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerIgnore, buildImage, localNodeImage, parseDockerfile, startImage } from "./docker-emulator.js";

let scratch: string;
let count = 0;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "docker-emulator-"));
  await chmod(scratch, 0o755);
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** A build context holding `files` (path -> content) and this Dockerfile. */
async function context(dockerfile: string, files: Record<string, string>): Promise<string> {
  const dir = join(scratch, `context-${++count}`);
  for (const [path, content] of Object.entries({ ...files, Dockerfile: dockerfile })) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

const build = (dir: string, buildArgs: Record<string, string> = {}) =>
  buildImage({
    context: dir,
    dockerfile: "Dockerfile",
    workRoot: join(dir, ".roots"),
    buildArgs,
    baseImages: { "node:20-slim": localNodeImage() },
  });

/** Every file under `dir`, relative, sorted. */
async function files(dir: string, prefix = ""): Promise<string[]> {
  const result: string[] = [];
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) result.push(...(await files(dir, path)));
    else result.push(path);
  }
  return result.sort();
}

describe(".dockerignore as the builder reads it", () => {
  const ignore = new DockerIgnore(
    ["# comment", "**/node_modules", "**/dist", "/.git", "*.md", "!README.md", "docs/**/*.png", ""].join("\n"),
  );

  it.each([
    ["node_modules/x/index.js", true],
    ["services/a/node_modules/pg/lib.js", true],
    ["services/a/dist/src/main.js", true],
    ["services/a/src/dist.ts", false],
    [".git/config", true],
    ["sub/.git", false],
    ["CHANGES.md", true],
    ["README.md", false],
    ["docs/CHANGES.md", false],
    ["docs/a/b/c.png", true],
    ["docs/c.png", true],
    ["src/main.ts", false],
  ])("%s excluded: %s", (path, excluded) => {
    expect(ignore.excludes(path)).toBe(excluded);
  });

  it("lets the last matching pattern decide", () => {
    expect(new DockerIgnore("!a.txt\n*.txt").excludes("a.txt")).toBe(true);
    expect(new DockerIgnore("*.txt\n!a.txt").excludes("a.txt")).toBe(false);
  });
});

describe("parseDockerfile", () => {
  it("reads stages, continuation lines and flags", () => {
    const parsed = parseDockerfile(
      [
        "# syntax=docker/dockerfile:1",
        "ARG BASE=node:20-slim",
        "FROM $BASE AS build",
        "RUN --mount=type=cache,target=/root/.npm \\",
        "  # a comment inside the instruction",
        "  npm ci",
        "FROM node:20-slim",
        "COPY --from=build /app/dist dist",
      ].join("\n"),
    );
    expect(parsed.globalArgs.map((i) => i.args)).toEqual(["BASE=node:20-slim"]);
    expect(parsed.stages.map((s) => [s.name, s.base])).toEqual([
      ["build", "$BASE"],
      [undefined, "node:20-slim"],
    ]);
    expect(parsed.stages[0]!.instructions[0]).toMatchObject({
      keyword: "RUN",
      args: "npm ci",
      flags: new Map([["mount", "type=cache,target=/root/.npm"]]),
    });
  });

  it.each([
    ["ADD x /x"],
    ["HEALTHCHECK CMD true"],
    ["ENTRYPOINT node"],
    ["COPY --chown=node x /x"],
    ["COPY --link x /x"],
  ])("refuses what it does not emulate: %s", (line) => {
    expect(() => parseDockerfile(`FROM node:20-slim\n${line}\n`)).toThrow(/is not emulated/);
  });
});

describe("buildImage", () => {
  it("copies what COPY names from the context, leaving out what .dockerignore excludes", async () => {
    const dir = await context(
      [
        "FROM node:20-slim",
        "WORKDIR /app",
        "COPY package.json lib/ ./",
        "COPY src src",
        "COPY one.txt renamed.txt",
        "COPY one.txt two.txt into/",
      ].join("\n"),
      {
        ".dockerignore": "**/dist\n**/*.test.ts\n",
        "package.json": "{}",
        "lib/a.js": "a",
        "lib/dist/b.js": "b",
        "src/main.ts": "main",
        "src/main.test.ts": "test",
        "src/dist/main.js": "stale",
        "src/deep/x.ts": "x",
        "one.txt": "1",
        "two.txt": "2",
        "not-copied.txt": "",
      },
    );
    const image = await build(dir);
    expect(await files(join(image.root, "app"))).toEqual([
      "a.js",
      "into/one.txt",
      "into/two.txt",
      "package.json",
      "renamed.txt",
      "src/deep/x.ts",
      "src/main.ts",
    ]);
  });

  it("fails on a source .dockerignore excludes or the context lacks", async () => {
    const ignored = await context("FROM node:20-slim\nCOPY dist/ /dist/\n", {
      ".dockerignore": "dist\n",
      "dist/x.js": "",
    });
    await expect(build(ignored)).rejects.toThrow("Dockerfile:2 COPY: dist/: not found (excluded by .dockerignore)");
    const missing = await context("FROM node:20-slim\nCOPY nothing.txt /\n", {});
    await expect(build(missing)).rejects.toThrow("Dockerfile:2 COPY: nothing.txt: not found in the build context");
  });

  it("runs RUN in the stage's WORKDIR inside its root, with its ENV and ARGs and nothing else", async () => {
    const dir = await context(
      [
        "FROM node:20-slim AS build",
        "ARG GREETING=hello",
        "ARG UNSET",
        "ENV TARGET=world",
        "WORKDIR /work",
        `RUN node -e 'require("fs").writeFileSync("env.json", JSON.stringify(process.env))'`,
        'RUN mkdir out && echo "$GREETING $TARGET${UNSET:-!}" > out/greeting.txt && chmod 600 out/greeting.txt',
        "FROM node:20-slim",
        "COPY --from=build /work/out /copied",
        "COPY --from=build /work/env.json /",
      ].join("\n"),
      {},
    );
    const image = await build(dir, { GREETING: "hi" });
    expect(await readFile(join(image.root, "copied/greeting.txt"), "utf8")).toBe("hi world!\n");
    expect((await stat(join(image.root, "copied/greeting.txt"))).mode & 0o777).toBe(0o600);
    const env = JSON.parse(await readFile(join(image.root, "env.json"), "utf8")) as Record<string, string>;
    expect(Object.keys(env).sort()).toEqual(["GREETING", "HOME", "NODE_VERSION", "PATH", "PWD", "TARGET"]);
    expect(env.PWD).toBe(join(dir, ".roots", "stage-0-build", "work"));
    // The build stage's own files stay in it.
    expect(existsSync(join(image.root, "work"))).toBe(false);
  });

  it("records ENV, LABEL, USER, EXPOSE and CMD, substituting build arguments", async () => {
    const dir = await context(
      [
        "FROM node:20-slim",
        "ARG REVISION",
        'ENV A=1 B="two words" REVISION=$REVISION',
        'LABEL org.opencontainers.image.revision="$REVISION" empty="${NOT_GIVEN}"',
        "USER node",
        "EXPOSE 8080 9464",
        'CMD ["node", "main.js"]',
      ].join("\n"),
      {},
    );
    const image = await build(dir, { REVISION: "abc123" });
    expect(image.env).toMatchObject({ A: "1", B: "two words", REVISION: "abc123" });
    expect(image.labels).toEqual({ "org.opencontainers.image.revision": "abc123", empty: "" });
    expect([image.user, image.uid, image.exposed, image.cmd]).toEqual([
      "node",
      1000,
      ["8080", "9464"],
      ["node", "main.js"],
    ]);
  });

  it("reports the failing RUN step with its exit code and output", async () => {
    const dir = await context('FROM node:20-slim\nRUN echo broken >&2 && exit 3\nRUN echo "never"\n', {});
    await expect(build(dir)).rejects.toThrow(
      /Dockerfile:2 RUN echo broken >&2 && exit 3 failed \(exit code 3\):\nbroken/,
    );
  });

  it("refuses a base image nothing stands for here", async () => {
    const dir = await context("FROM alpine:3\n", {});
    await expect(build(dir)).rejects.toThrow("FROM alpine:3: no base image stands for it here");
  });
});

describe("startImage", () => {
  it("starts CMD with the image's environment only, in its WORKDIR, as its USER, without network", async () => {
    const dir = await context(
      [
        "FROM node:20-slim",
        "ENV NODE_ENV=production",
        "WORKDIR /app",
        "COPY main.mjs ./",
        "USER node",
        'CMD ["node", "main.mjs"]',
      ].join("\n"),
      {
        "main.mjs": [
          'import { connect } from "node:net";',
          "const socket = connect(5432, '127.0.0.1');",
          "socket.on('error', (error) => {",
          "  console.log(JSON.stringify({ env: Object.keys(process.env).sort(), cwd: process.cwd(),",
          "    uid: process.getuid(), error: error.code }));",
          "  process.exit(1);",
          "});",
          "socket.on('connect', () => { console.log('connected'); process.exit(0); });",
        ].join("\n"),
      },
    );
    const image = await build(dir);
    const { code, output } = await startImage(image);
    expect(code).toBe(1);
    const seen = JSON.parse(output) as { env: string[]; cwd: string; uid: number; error: string };
    expect(seen.env).toEqual(["HOME", "NODE_ENV", "NODE_VERSION", "PATH"]);
    expect(seen.cwd).toBe(join(image.root, "app"));
    expect(seen.error).toMatch(/^(ECONNREFUSED|ENETUNREACH)$/);
    if (process.getuid?.() === 0) expect(seen.uid).toBe(1000);
  });

  it("shows a package the image does not carry as the missing module it is", async () => {
    const dir = await context(
      ["FROM node:20-slim", "WORKDIR /app", "COPY main.mjs ./", 'CMD ["node", "main.mjs"]'].join("\n"),
      { "main.mjs": 'import "zod";\n' },
    );
    const { code, output } = await startImage(await build(dir));
    expect(code).toBe(1);
    expect(output).toContain("ERR_MODULE_NOT_FOUND");
    expect(output).toContain("Cannot find package 'zod'");
  });
});
