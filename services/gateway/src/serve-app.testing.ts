import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type Koa from "koa";

/** For tests: `app` served on a free loopback port, its base URL, and a close that waits for it. */
export async function serveApp(app: Koa): Promise<{ base: string; close(): Promise<void> }> {
  const server = createServer(app.callback()).listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.close();
      await once(server, "close");
    },
  };
}
