/**
 * A JetStream namespace of one's own for a test file or a benchmark run: the value of
 * NATS_NAMESPACE, which prefixes every stream name and subject the webhooks service declares, so
 * runs sharing one nats-server never consume each other's messages. Delete its streams when done.
 */
import { randomBytes } from "node:crypto";
import { connect } from "nats";

/** The NATS the tests and benchmarks use: TEST_NATS_URL, else the local one. */
export const testNatsUrl = (): string => process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222";

/** `t<pid>_<hex>_`: stream names may hold letters, digits and `_`. */
export function newNatsNamespace(prefix = "t"): string {
  return `${prefix}${process.pid}_${randomBytes(3).toString("hex")}_`;
}

/** Deletes every stream whose name starts with `namespace` (never all streams: it must not be empty). */
export async function deleteNamespaceStreams(namespace: string, url = testNatsUrl()): Promise<string[]> {
  if (namespace === "") throw new Error("refusing to delete the streams of the empty (production) namespace");
  const nc = await connect({ servers: url, timeout: 5_000 });
  const deleted: string[] = [];
  try {
    const jsm = await nc.jetstreamManager();
    for await (const stream of jsm.streams.list()) {
      if (stream.config.name.startsWith(namespace)) {
        await jsm.streams.delete(stream.config.name);
        deleted.push(stream.config.name);
      }
    }
  } finally {
    await nc.close();
  }
  return deleted;
}
