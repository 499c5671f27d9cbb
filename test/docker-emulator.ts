// Builds and starts an image from a Dockerfile without a container engine, as faithfully as a
// process on this machine can: test/images.test.ts uses it on every service's Dockerfile.
//
// - Each stage gets a scratch directory standing for its root filesystem. `FROM` a base image
//   starts from an empty root plus what the base image is declared to provide (`baseImages`: its
//   ENV, users and the programs it stands for on this machine; node:20 stands for the local node
//   and npm); `FROM <earlier stage>` starts from a copy of that stage's root.
// - COPY copies exactly what it names, from the build context (honouring .dockerignore as the
//   builder does: Go path patterns with `**`, `!` exceptions, the last matching pattern deciding,
//   a parent directory's match excluding what it holds) or with --from from an earlier stage's
//   root. A directory source copies its contents; modes and symbolic links are kept.
// - RUN runs `/bin/sh -c` in the stage's WORKDIR inside its root, with the stage's ENV and the ARGs
//   in scope and nothing else from this process's environment; HOME is the root's /root. A
//   `--mount=type=cache,target=T` is a builder-managed cache that is not part of the image: T is a
//   symbolic link to a host directory (`cacheMounts`) for the step only.
// - ENV, ARG (global and per stage, `buildArgs`), LABEL, USER, EXPOSE, CMD are recorded, with the
//   builder's $VAR / ${VAR} / ${VAR:-default} substitution.
// - Anything else (ADD, HEALTHCHECK, ENTRYPOINT, COPY wildcards, --chown...) is refused, so a
//   Dockerfile this cannot emulate fails loudly instead of being half-checked.
//
// What it cannot do: RUN and CMD see this machine's filesystem outside the stage's root (commands
// must use paths relative to WORKDIR, as the template's do), and the base image's own files are
// this machine's. startImage runs CMD in a network namespace of its own (no route anywhere, as
// in a container without a network) and, when this process is root, as the USER's uid.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, copyFile, lstat, mkdir, readFile, readdir, readlink, rm, symlink, unlink } from "node:fs/promises";
import { dirname, join, posix } from "node:path";

export interface Instruction {
  keyword: string;
  flags: Map<string, string>;
  args: string;
  line: number;
}

export interface DockerfileStage {
  name: string | undefined;
  base: string;
  instructions: Instruction[];
}

export interface Dockerfile {
  /** ARGs declared before the first FROM. */
  globalArgs: Instruction[];
  stages: DockerfileStage[];
}

const supported = new Set(["FROM", "WORKDIR", "COPY", "RUN", "ENV", "ARG", "LABEL", "USER", "EXPOSE", "CMD"]);

/** Parses a Dockerfile into stages; refuses what the emulator does not implement. */
export function parseDockerfile(text: string): Dockerfile {
  const result: Dockerfile = { globalArgs: [], stages: [] };
  const lines = text.split("\n");
  for (let index = 0; index < lines.length; index++) {
    const first = index + 1;
    let logical = lines[index]!;
    if (/^\s*(#|$)/.test(logical)) continue;
    // A backslash at the end of a line continues the instruction; comment lines inside it are dropped.
    while (/\\\s*$/.test(logical) && index + 1 < lines.length) {
      logical = logical.replace(/\\\s*$/, " ");
      index++;
      while (index + 1 < lines.length && /^\s*#/.test(lines[index]!)) index++;
      logical += lines[index]!;
    }
    const match = /^\s*(\S+)\s*(.*)$/s.exec(logical)!;
    const keyword = match[1]!.toUpperCase();
    if (!supported.has(keyword)) throw new Error(`line ${first}: ${keyword} is not emulated`);
    let rest = match[2]!.trim();
    const flags = new Map<string, string>();
    if (keyword === "COPY" || keyword === "RUN") {
      for (let flag = /^--([a-z-]+)(?:=(\S*))?\s+/.exec(rest); flag; flag = /^--([a-z-]+)(?:=(\S*))?\s+/.exec(rest)) {
        flags.set(flag[1]!, flag[2] ?? "true");
        rest = rest.slice(flag[0].length);
      }
      const allowed = keyword === "COPY" ? ["from"] : ["mount"];
      for (const name of flags.keys()) {
        if (!allowed.includes(name)) throw new Error(`line ${first}: ${keyword} --${name} is not emulated`);
      }
    }
    const instruction: Instruction = { keyword, flags, args: rest, line: first };
    if (keyword === "FROM") {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      if (!from) throw new Error(`line ${first}: FROM ${rest} is not emulated`);
      result.stages.push({ base: from[1]!, name: from[2]?.toLowerCase(), instructions: [] });
    } else if (result.stages.length === 0) {
      if (keyword !== "ARG") throw new Error(`line ${first}: ${keyword} before the first FROM`);
      result.globalArgs.push(instruction);
    } else {
      result.stages.at(-1)!.instructions.push(instruction);
    }
  }
  return result;
}

type Variables = ReadonlyMap<string, string>;

/** The builder's word processing: $VAR, ${VAR}, ${VAR:-default}, ${VAR:+alt}, quotes and backslashes. */
function expandWord(text: string, variables: Variables): string {
  let out = "";
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else out += c;
    } else if (c === "\\" && i + 1 < text.length) {
      out += text[++i];
    } else if ((c === '"' || c === "'") && quote === undefined) {
      quote = c;
    } else if (c === '"' && quote === '"') {
      quote = undefined;
    } else if (c === "$") {
      const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-+])([^}]*))?\}/.exec(text.slice(i));
      const plain = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(text.slice(i));
      if (braced) {
        const value = variables.get(braced[1]!);
        if (braced[2] === "-") out += value ? value : expandWord(braced[3]!, variables);
        else if (braced[2] === "+") out += value ? expandWord(braced[3]!, variables) : "";
        else out += value ?? "";
        i += braced[0].length - 1;
      } else if (plain) {
        out += variables.get(plain[1]!) ?? "";
        i += plain[0].length - 1;
      } else {
        out += c;
      }
    } else {
      out += c;
    }
  }
  if (quote) throw new Error(`unterminated quote in ${text}`);
  return out;
}

/** Splits on unquoted whitespace (before expansion). */
function words(text: string): string[] {
  const result: string[] = [];
  let current = "";
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\" && quote !== "'" && i + 1 < text.length) {
      current += c + text[++i]!;
    } else if (quote) {
      if (c === quote) quote = undefined;
      current += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      current += c;
    } else if (/\s/.test(c)) {
      if (current) result.push(current);
      current = "";
    } else {
      current += c;
    }
  }
  if (current) result.push(current);
  return result;
}

/** `KEY=value KEY2="v w"` (ENV, LABEL, ARG) or the legacy `KEY value` form of ENV. */
function keyValues(args: string, variables: Variables, legacy: boolean): [string, string | undefined][] {
  const parts = words(args);
  if (legacy && parts.length > 0 && !parts[0]!.includes("=")) {
    return [[parts[0]!, expandWord(args.slice(args.indexOf(parts[0]!) + parts[0]!.length).trim(), variables)]];
  }
  return parts.map((part) => {
    const equals = part.indexOf("=");
    if (equals < 0) return [expandWord(part, variables), undefined];
    return [expandWord(part.slice(0, equals), variables), expandWord(part.slice(equals + 1), variables)];
  });
}

/** The exec form (a JSON array) or the shell form of RUN and CMD. */
function commandOf(args: string): string[] {
  if (args.startsWith("[")) {
    const parsed: unknown = JSON.parse(args);
    if (!Array.isArray(parsed) || !parsed.every((part) => typeof part === "string")) {
      throw new Error(`not a JSON array of strings: ${args}`);
    }
    return parsed;
  }
  return ["/bin/sh", "-c", args];
}

// ---------------------------------------------------------------------------------------------
// .dockerignore

interface IgnorePattern {
  regex: RegExp;
  exception: boolean;
}

function patternRegex(pattern: string): RegExp {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*" && pattern[i + 1] === "*") {
      if (pattern[i + 2] === "/") {
        source += "(?:.*/)?";
        i += 2;
      } else {
        source += ".*";
        i += 1;
      }
    } else if (c === "*") {
      source += "[^/]*";
    } else if (c === "?") {
      source += "[^/]";
    } else if (c === "[") {
      const end = pattern.indexOf("]", i + 1);
      if (end < 0) throw new Error(`.dockerignore: unterminated [ in ${pattern}`);
      source += `[${pattern.slice(i + 1, end).replace(/\\/g, "\\\\")}]`;
      i = end;
    } else if (c === "\\" && i + 1 < pattern.length) {
      source += pattern[++i]!.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    } else {
      source += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    }
  }
  return new RegExp(`^${source}$`);
}

/** The builder's reading of .dockerignore: which context paths (posix, relative) are left out. */
export class DockerIgnore {
  readonly patterns: IgnorePattern[];

  constructor(text: string) {
    this.patterns = text
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#"))
      .map((line) => {
        const exception = line.startsWith("!");
        let pattern = posix.normalize(exception ? line.slice(1).trim() : line);
        pattern = pattern.replace(/^\/+/, "").replace(/\/+$/, "");
        return { regex: patternRegex(pattern), exception };
      });
  }

  get hasExceptions(): boolean {
    return this.patterns.some((pattern) => pattern.exception);
  }

  /** Whether `path` is left out: the last pattern matching it or one of its parents decides. */
  excludes(path: string): boolean {
    const parents: string[] = [];
    const parts = path.split("/");
    for (let i = 1; i <= parts.length; i++) parents.push(parts.slice(0, i).join("/"));
    let excluded = false;
    for (const { regex, exception } of this.patterns) {
      if (parents.some((candidate) => regex.test(candidate))) excluded = !exception;
    }
    return excluded;
  }
}

// ---------------------------------------------------------------------------------------------
// Building

export interface BaseImage {
  env: Record<string, string>;
  /** user name -> uid */
  users: Record<string, number>;
  /** Directories the base image has (home directories...). */
  directories: string[];
}

/** node:20.*-bookworm-slim stands for this machine's node and npm (on the image's PATH). */
export function localNodeImage(): BaseImage {
  const imagePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  const nodeDirectory = dirname(process.execPath);
  return {
    env: {
      PATH: imagePath.split(":").includes(nodeDirectory) ? imagePath : `${nodeDirectory}:${imagePath}`,
      NODE_VERSION: process.versions.node,
    },
    users: { root: 0, node: 1000 },
    directories: ["/root", "/home/node", "/tmp"],
  };
}

export interface Image {
  /** The final stage's root directory on this machine. */
  root: string;
  env: Record<string, string>;
  workdir: string;
  user: string;
  uid: number;
  labels: Record<string, string>;
  exposed: string[];
  cmd: string[];
}

export interface BuildOptions {
  /** The build context: the repository root. */
  context: string;
  /** The Dockerfile's path, relative to the context. */
  dockerfile: string;
  /** Where the stages' roots are made (one folder per stage). */
  workRoot: string;
  buildArgs?: Record<string, string>;
  baseImages: Record<string, BaseImage>;
  /** `--mount=type=cache,target=T`: T -> a directory of this machine. */
  cacheMounts?: Record<string, string>;
  /** Each step as it starts (`[stage] INSTRUCTION args`), and `[stage] done` as each stage ends. */
  onStep?: (step: string) => void;
}

interface StageState {
  root: string;
  env: Map<string, string>;
  args: Map<string, string | undefined>;
  workdir: string;
  user: string;
  users: Record<string, number>;
  labels: Map<string, string>;
  exposed: string[];
  cmd: string[];
}

export class BuildError extends Error {
  override name = "BuildError";
}

/** Runs a command; resolves with its exit code and combined output. */
function run(
  command: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const collect = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (output.length > 2_000_000) output = output.slice(-1_000_000);
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    const timer =
      options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    });
  });
}

/** Copies `from` (file, directory or link) to `to`, keeping modes and links. */
async function copyEntry(from: string, to: string, include?: (path: string, isDirectory: boolean) => boolean) {
  const info = await lstat(from);
  if (info.isSymbolicLink()) {
    await rm(to, { force: true, recursive: true });
    await symlink(await readlink(from), to);
  } else if (info.isDirectory()) {
    await mkdir(to, { recursive: true });
    for (const entry of await readdir(from)) {
      const source = join(from, entry);
      const isDirectory = (await lstat(source)).isDirectory();
      if (include && !include(source, isDirectory)) continue;
      await copyEntry(source, join(to, entry), include);
    }
    await chmod(to, info.mode & 0o7777);
  } else if (info.isFile()) {
    await copyFile(from, to);
    await chmod(to, info.mode & 0o7777);
  } else {
    throw new BuildError(`${from}: not a file, directory or link`);
  }
}

/** Builds the last stage (or `target`) and the stages it depends on; returns its image. */
export async function buildImage(options: BuildOptions & { target?: string }): Promise<Image> {
  const log = options.onStep ?? (() => {});
  const dockerfile = parseDockerfile(await readFile(join(options.context, options.dockerfile), "utf8"));
  const ignorePath = join(options.context, ".dockerignore");
  const ignore = new DockerIgnore(existsSync(ignorePath) ? await readFile(ignorePath, "utf8") : "");
  const buildArgs = new Map(Object.entries(options.buildArgs ?? {}));

  const globalArgs = new Map<string, string | undefined>();
  for (const instruction of dockerfile.globalArgs) {
    for (const [name, fallback] of keyValues(instruction.args, new Map(), false)) {
      globalArgs.set(name, buildArgs.get(name) ?? fallback);
    }
  }
  const globals = new Map([...globalArgs].filter((entry): entry is [string, string] => entry[1] !== undefined));

  const stageIndex = (reference: string): number => {
    const byName = dockerfile.stages.findIndex((stage) => stage.name === reference.toLowerCase());
    if (byName >= 0) return byName;
    if (/^\d+$/.test(reference) && Number(reference) < dockerfile.stages.length) return Number(reference);
    return -1;
  };
  const target = options.target === undefined ? dockerfile.stages.length - 1 : stageIndex(options.target);
  if (target < 0) throw new BuildError(`no stage ${options.target}`);

  // The stages the target needs, as the builder only builds those.
  const needed = new Set<number>();
  const need = (index: number) => {
    if (needed.has(index)) return;
    needed.add(index);
    const stage = dockerfile.stages[index]!;
    const base = stageIndex(expandWord(stage.base, globals));
    if (base >= 0 && base < index) need(base);
    for (const instruction of stage.instructions) {
      const from = instruction.flags.get("from");
      if (from !== undefined) {
        const source = stageIndex(from);
        if (source < 0 || source >= index) {
          throw new BuildError(`line ${instruction.line}: --from=${from} names no earlier stage`);
        }
        need(source);
      }
    }
  };
  need(target);

  // As BuildKit does, the stages run concurrently: a stage waits for another only where it uses it
  // (FROM that stage, COPY --from it), so a runtime stage installs its dependencies while the build
  // stage compiles. A failing stage fails the build once every stage has settled.
  const built = new Map<number, Promise<StageState>>();
  for (const index of [...needed].sort((a, b) => a - b)) built.set(index, buildStage(index));
  const results = await Promise.allSettled(built.values());
  const failed = results.find((result): result is PromiseRejectedResult => result.status === "rejected");
  if (failed) throw failed.reason;

  async function buildStage(index: number): Promise<StageState> {
    const stage = dockerfile.stages[index]!;
    const root = join(options.workRoot, `stage-${index}-${stage.name ?? "unnamed"}`);
    await rm(root, { recursive: true, force: true });
    const baseName = expandWord(stage.base, globals);
    const baseStage = stageIndex(baseName);
    let state: StageState;
    if (baseStage >= 0 && baseStage < index) {
      const parent = await built.get(baseStage)!;
      await copyEntry(parent.root, root);
      state = {
        ...parent,
        root,
        env: new Map(parent.env),
        args: new Map(),
        labels: new Map(parent.labels),
        exposed: [...parent.exposed],
      };
    } else {
      const image = options.baseImages[baseName];
      if (!image) throw new BuildError(`FROM ${baseName}: no base image stands for it here (no registry)`);
      await mkdir(root, { recursive: true, mode: 0o755 });
      await chmod(root, 0o755);
      for (const directory of image.directories) await mkdir(join(root, directory), { recursive: true });
      state = {
        root,
        env: new Map(Object.entries(image.env)),
        args: new Map(),
        workdir: "/",
        user: "root",
        users: image.users,
        labels: new Map(),
        exposed: [],
        cmd: [],
      };
    }
    log(`[${stage.name ?? index}] FROM ${baseName}`);
    const inside = (path: string) => join(root, posix.resolve(state.workdir, path));
    const variables = (): Variables => {
      const scope = new Map<string, string>();
      for (const [name, value] of state.args) if (value !== undefined) scope.set(name, value);
      for (const [name, value] of state.env) scope.set(name, value);
      return scope;
    };

    for (const instruction of stage.instructions) {
      const where = `${options.dockerfile}:${instruction.line} ${instruction.keyword}`;
      log(`[${stage.name ?? index}] ${instruction.keyword} ${instruction.args}`);
      switch (instruction.keyword) {
        case "ARG":
          for (const [name, fallback] of keyValues(instruction.args, variables(), false)) {
            state.args.set(name, buildArgs.get(name) ?? fallback ?? globalArgs.get(name));
          }
          break;
        case "ENV":
          for (const [name, value] of keyValues(instruction.args, variables(), true)) {
            if (value === undefined) throw new BuildError(`${where}: ${name} has no value`);
            state.env.set(name, value);
          }
          break;
        case "LABEL":
          for (const [name, value] of keyValues(instruction.args, variables(), false)) {
            if (value === undefined) throw new BuildError(`${where}: ${name} has no value`);
            state.labels.set(name, value);
          }
          break;
        case "WORKDIR":
          state.workdir = posix.resolve(state.workdir, expandWord(instruction.args, variables()));
          await mkdir(join(root, state.workdir), { recursive: true });
          break;
        case "USER": {
          const user = expandWord(instruction.args, variables());
          if (!(user in state.users) && !/^\d+$/.test(user)) throw new BuildError(`${where}: no user ${user}`);
          state.user = user;
          break;
        }
        case "EXPOSE":
          state.exposed.push(...words(instruction.args).map((word) => expandWord(word, variables())));
          break;
        case "CMD":
          state.cmd = commandOf(instruction.args);
          break;
        case "COPY":
          await copy(instruction, where, state, variables(), inside);
          break;
        case "RUN":
          await runStep(instruction, where, state, variables());
          break;
        default:
          throw new BuildError(`${where}: not emulated`);
      }
    }
    log(`[${stage.name ?? index}] done`);
    return state;
  }

  async function copy(
    instruction: Instruction,
    where: string,
    state: StageState,
    scope: Variables,
    inside: (path: string) => string,
  ) {
    const parts = instruction.args.startsWith("[") ? commandOf(instruction.args) : words(instruction.args);
    const expanded = parts.map((part) => expandWord(part, scope));
    if (expanded.length < 2) throw new BuildError(`${where}: needs a source and a destination`);
    const destination = expanded.at(-1)!;
    const sources = expanded.slice(0, -1);
    if (sources.some((source) => /[*?[]/.test(source))) throw new BuildError(`${where}: wildcards are not emulated`);
    const intoDirectory = destination.endsWith("/") || sources.length > 1;
    const target = inside(destination);
    const from = instruction.flags.get("from");
    for (const source of sources) {
      let path: string;
      let include: ((path: string, isDirectory: boolean) => boolean) | undefined;
      if (from !== undefined) {
        const sourceStage = await built.get(stageIndex(from))!;
        path = join(sourceStage.root, posix.resolve("/", source));
      } else {
        const relative = posix
          .normalize(source)
          .replace(/^(\.\/|\/)+/, "")
          .replace(/\/+$/, "");
        if (relative.startsWith("..")) throw new BuildError(`${where}: ${source} is outside the build context`);
        path = join(options.context, relative);
        const contextPrefix = options.context.endsWith("/") ? options.context : `${options.context}/`;
        const relativeOf = (absolute: string) => absolute.slice(contextPrefix.length);
        if (relative !== "" && relative !== "." && ignore.excludes(relative) && !ignore.hasExceptions) {
          throw new BuildError(`${where}: ${source}: not found (excluded by .dockerignore)`);
        }
        include = (absolute, isDirectory) =>
          !ignore.excludes(relativeOf(absolute)) || (isDirectory && ignore.hasExceptions);
        if (!existsSync(path)) throw new BuildError(`${where}: ${source}: not found in the build context`);
        if (!(await lstat(path)).isDirectory() && ignore.excludes(relative)) {
          throw new BuildError(`${where}: ${source}: not found (excluded by .dockerignore)`);
        }
      }
      if (!existsSync(path)) throw new BuildError(`${where}: ${source}: not found`);
      const info = await lstat(path);
      if (info.isDirectory()) {
        await copyEntry(path, target, include);
      } else {
        const destinationIsDirectory = intoDirectory || (existsSync(target) && (await lstat(target)).isDirectory());
        const file = destinationIsDirectory ? join(target, posix.basename(source)) : target;
        await mkdir(dirname(file), { recursive: true });
        await copyEntry(path, file);
      }
    }
  }

  async function runStep(instruction: Instruction, where: string, state: StageState, scope: Variables) {
    const mounts: string[] = [];
    const mount = instruction.flags.get("mount");
    if (mount !== undefined) {
      const fields = new Map(mount.split(",").map((field) => field.split("=") as [string, string]));
      const mountTarget = fields.get("target") ?? fields.get("dst") ?? fields.get("destination");
      if (fields.get("type") !== "cache" || mountTarget === undefined) {
        throw new BuildError(`${where}: only --mount=type=cache,target=... is emulated`);
      }
      const host = options.cacheMounts?.[mountTarget];
      if (host === undefined) throw new BuildError(`${where}: no cache directory given for ${mountTarget}`);
      const at = join(state.root, mountTarget);
      if (existsSync(at)) throw new BuildError(`${where}: ${mountTarget} exists in the stage; cannot mount over it`);
      await mkdir(dirname(at), { recursive: true });
      await symlink(host, at);
      mounts.push(at);
    }
    const env: Record<string, string> = {
      HOME: join(state.root, state.user === "root" ? "/root" : `/home/${state.user}`),
    };
    for (const [name, value] of scope) env[name] = value;
    try {
      const { code, signal, output } = await run(commandOf(instruction.args), {
        cwd: join(state.root, state.workdir),
        env,
      });
      if (code !== 0) {
        throw new BuildError(
          `${where} ${instruction.args} failed (${signal ?? `exit code ${code}`}):\n${output.slice(-4000)}`,
        );
      }
    } finally {
      for (const at of mounts) await unlink(at);
    }
  }

  const final = await built.get(target)!;
  return {
    root: final.root,
    env: Object.fromEntries(final.env),
    workdir: final.workdir,
    user: final.user,
    uid: final.users[final.user] ?? Number(final.user),
    labels: Object.fromEntries(final.labels),
    exposed: final.exposed,
    cmd: final.cmd,
  };
}

// ---------------------------------------------------------------------------------------------
// Starting

export interface StartResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/**
 * Starts the image's CMD (or `command`) as `docker run` would, with the image's ENV and HOME plus
 * `env`: in its WORKDIR inside its root, in a network namespace of its own (no route, not even
 * to this machine's Postgres on loopback) and, when this process is root, as the image's USER.
 */
export async function startImage(
  image: Image,
  options: { env?: Record<string, string>; command?: string[]; timeoutMs?: number } = {},
): Promise<StartResult> {
  const command = options.command ?? image.cmd;
  if (command.length === 0) throw new Error("the image has no CMD");
  const home = image.user === "root" ? "/root" : `/home/${image.user}`;
  const env = { ...image.env, HOME: join(image.root, home), ...options.env };
  const asUser =
    process.getuid?.() === 0 && image.uid !== 0
      ? ["/usr/bin/setpriv", `--reuid=${image.uid}`, `--regid=${image.uid}`, "--clear-groups", "--"]
      : [];
  const isolate =
    process.getuid?.() === 0
      ? ["/usr/bin/unshare", "--net", "--"]
      : ["/usr/bin/unshare", "--map-root-user", "--net", "--"];
  for (const tool of [isolate[0]!, ...asUser.slice(0, 1)]) {
    if (!existsSync(tool)) throw new Error(`${tool} is needed to start an image without network (util-linux)`);
  }
  return run([...isolate, ...asUser, ...command], {
    cwd: join(image.root, image.workdir),
    env,
    timeoutMs: options.timeoutMs ?? 20_000,
  });
}
