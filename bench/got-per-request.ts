/**
 * CPU per gateway request of the transport, against a local keep-alive server in this process
 * (its CPU counted too, the same for every variant): HttpTransport (got, as the client sends),
 * and for scale got with no per-request options and Node's http alone.
 *   ROUNDS=3 REQUESTS=4000 node --import tsx bench/got-per-request.ts
 */
import http from 'node:http';
import got from 'got';
import { HttpTransport } from '../src/gateway/http-transport.js';
import { createLogger } from '../src/logger.js';

const requests = Number(process.env.REQUESTS ?? 4000);
const body = JSON.stringify({ wallet: { id: 'w-1', balance: '12.34', currency: 'USD' } });
const server = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', link: '</w?page=2>; rel="next"' });
  res.end(body);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as { port: number };
const base = `http://127.0.0.1:${port}`;

const agent = new http.Agent({ keepAlive: true });
const transport = new HttpTransport({ timeoutMs: 10_000, authScheme: 'Bearer', logger: createLogger({ level: 'warn' } as never), signal: new AbortController().signal });
const plainGot = got.extend({ agent: { http: agent }, retry: { limit: 0 }, followRedirect: false, throwHttpErrors: false });

const variants: Record<string, (i: number) => Promise<unknown>> = {
  transport: (i) => transport.send({ method: 'GET', url: new URL(`${base}/wallets/w-${i}`), headers: { accept: 'application/json' }, token: 'tok' }, 1),
  'got, no options': (i) => plainGot(`${base}/wallets/w-${i}`).text(),
  'node http': (i) =>
    new Promise((resolve, reject) => {
      http
        .get(`${base}/wallets/w-${i}`, { agent, headers: { authorization: 'Bearer tok' } }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve(text));
        })
        .on('error', reject);
    }),
};

const rounds = Number(process.env.ROUNDS ?? 3);
for (let round = 1; round <= rounds; round++) {
  for (const [name, send] of Object.entries(variants)) {
    for (let i = 0; i < 300; i++) await send(i); // warm-up
    const c0 = process.cpuUsage();
    for (let i = 0; i < requests; i++) await send(i);
    const c = process.cpuUsage(c0);
    console.log(`round ${round} ${name}: ${((c.user + c.system) / 1000 / requests).toFixed(3)} ms CPU per request`);
  }
}
server.close();
agent.destroy();
