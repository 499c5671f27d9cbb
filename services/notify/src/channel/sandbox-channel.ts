import { randomUUID } from "node:crypto";
import type { ChannelProvider } from "../domain/channel-provider.js";

/**
 * NOTIFY_CHANNEL_PROVIDER=sandbox (the default): accepts every message and sends nothing
 * outside the process. The rendered text is recorded on the transcript like any other send; the
 * message id it answers is its own.
 */
export function createSandboxChannel(): ChannelProvider {
  return {
    name: "sandbox",
    send: () => Promise.resolve({ kind: "sent", providerMessageId: `sandbox.${randomUUID()}` }),
  };
}
