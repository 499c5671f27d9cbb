/**
 * A TCP proxy in front of Postgres that counts the statements its clients send (bench only:
 * pg_stat_statements is not preloaded on the shared server, and restarting it is not ours to
 * do). It reads the frontend side of the wire protocol: after the startup packet every message
 * is a type byte and an int32 length; a simple query ('Q') or an extended-protocol Execute ('E')
 * is one statement (a 'Q' holding several statements separated by ';' counts once: neither the
 * product nor the floor sends one). The backend side is passed through unread.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";

export interface StatementCounts {
  /** Simple-protocol queries ('Q' messages). */
  simple: number;
  /** Extended-protocol executions ('E' messages). */
  executes: number;
}

export interface CountingProxy {
  port: number;
  counts(): StatementCounts;
  close(): Promise<void>;
}

/** Walks one connection's frontend byte stream, message by message, across chunk boundaries. */
function frontendCounter(counts: StatementCounts): (chunk: Buffer) => void {
  let startup = true; // the first packet (startup, SSLRequest, CancelRequest) has no type byte
  let header = Buffer.alloc(0); // a header split across chunks
  let skip = 0; // bytes of the current message's body still to pass
  return (chunk) => {
    let offset = 0;
    while (offset < chunk.length) {
      if (skip > 0) {
        const n = Math.min(skip, chunk.length - offset);
        skip -= n;
        offset += n;
        continue;
      }
      const headerLength = startup ? 4 : 5;
      const need = headerLength - header.length;
      const take = chunk.subarray(offset, offset + need);
      header = header.length === 0 ? Buffer.from(take) : Buffer.concat([header, take]);
      offset += take.length;
      if (header.length < headerLength) return;
      if (startup) {
        // (An SSLRequest would be followed by a second startup packet: no client here asks for TLS.)
        skip = header.readInt32BE(0) - 4;
        startup = false;
      } else {
        const type = header[0];
        if (type === 0x51) counts.simple += 1;
        else if (type === 0x45) counts.executes += 1;
        skip = header.readInt32BE(1) - 4;
      }
      header = Buffer.alloc(0);
    }
  };
}

/** Listens on 127.0.0.1 (any free port) and forwards every connection to `target`. */
export async function startCountingProxy(target: { host: string; port: number }): Promise<CountingProxy> {
  const counts: StatementCounts = { simple: 0, executes: 0 };
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection(target);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    sockets.add(client).add(upstream);
    const count = frontendCounter(counts);
    client.on("data", (chunk: Buffer) => {
      count(chunk);
      if (!upstream.write(chunk)) client.pause();
    });
    upstream.on("drain", () => client.resume());
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
    client.on("end", () => upstream.end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the proxy has no TCP address");
  return {
    port: address.port,
    counts: () => ({ ...counts }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
