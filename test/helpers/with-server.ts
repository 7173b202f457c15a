import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as the test server received it, body included. */
export interface ReceivedRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  /** Path only. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

export type TestHandler = (request: ReceivedRequest, res: ServerResponse, raw: IncomingMessage) => void | Promise<void>;

/** A real HTTP server on 127.0.0.1 with an ephemeral port. */
export interface TestServer {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  url: string;
  /** Every request received, in arrival order. */
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

/** Starts a server that records each request (after reading its body) and hands it to `handler`. */
export async function startServer(handler: TestHandler): Promise<TestServer> {
  const requests: ReceivedRequest[] = [];
  const server = http.createServer((raw, res) => {
    const chunks: Buffer[] = [];
    raw.on('data', (chunk: Buffer) => chunks.push(chunk));
    raw.on('end', () => {
      const parsed = new URL(raw.url ?? '/', 'http://127.0.0.1');
      const request: ReceivedRequest = {
        method: raw.method ?? 'GET',
        url: raw.url ?? '/',
        path: parsed.pathname,
        query: parsed.searchParams,
        headers: raw.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(request);
      Promise.resolve(handler(request, res, raw)).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(599, { 'content-type': 'text/plain' });
        res.end(`test handler failed: ${String(error)}`);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        // Hanging handlers and keep-alive sockets would otherwise hold close() open.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Runs `fn` against a fresh server and always closes it. */
export async function withServer<T>(handler: TestHandler, fn: (server: TestServer) => Promise<T>): Promise<T> {
  const server = await startServer(handler);
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}

/** Answers with a JSON text (given as a string so tests control number syntax exactly) and headers. */
export function sendJson(res: ServerResponse, status: number, body: string | object, headers: Record<string, string | string[]> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
