import { createServer, connect, type Socket } from 'node:net';

/**
 * A TCP proxy to a server, for what a network does to a connection: `freeze()` stops carrying
 * bytes both ways while keeping every socket open (a cut cable or a dead NAT: the client hears
 * nothing, not even that its server session ended); `close()` drops everything.
 */
export interface TcpProxy {
  readonly port: number;
  freeze(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs: Array<[Socket, Socket]> = [];
  let frozen = false;
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    pairs.push([client, upstream]);
    const forward = (from: Socket, to: Socket) =>
      from.on('data', (chunk: Buffer) => {
        if (!frozen) to.write(chunk);
      });
    forward(client, upstream);
    forward(upstream, client);
    // While frozen, an end on one side is not passed on either: the other side must not learn of it.
    const end = (other: Socket) => () => {
      if (!frozen) other.destroy();
    };
    client.on('close', end(upstream));
    upstream.on('close', end(client));
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    freeze() {
      frozen = true;
    },
    async close() {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
