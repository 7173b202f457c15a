import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A PostgreSQL 15 cluster of this test's own, from the machine's binaries, on a free port with
 * trust authentication on 127.0.0.1: the fault tests restart and stop it, which they must never
 * do to the server every other test shares. Always `remove()` it (in afterAll/finally).
 */
export interface PrivatePostgres {
  readonly port: number;
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database?: string): string;
  start(): void;
  /** A fast shutdown: every session is disconnected, as in an upgrade's restart. */
  stop(): void;
  restart(): void;
  remove(): void;
}

const BIN = process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin';

/** Whether this machine can run a private cluster (the binaries exist, and we can become `postgres` when root). */
export function canRunPrivatePostgres(): boolean {
  const initdb = spawnSync(path.join(BIN, 'initdb'), ['--version']);
  if (initdb.status !== 0) return false;
  return process.getuid?.() !== 0 || spawnSync('id', ['postgres']).status === 0;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const asRoot = process.getuid?.() === 0;
  // PostgreSQL refuses to run as root: as root, the cluster belongs to and runs as `postgres`.
  const run = (tool: string, args: string[]) => {
    const command = asRoot ? ['runuser', ['-u', 'postgres', '--', path.join(BIN, tool), ...args]] as const : [path.join(BIN, tool), args] as const;
    execFileSync(command[0], command[1], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  };
  // Not the test's TMPDIR: that scratch folder is the runner's alone, and `postgres` must reach this one.
  const dir = mkdtempSync(path.join(process.env.FAULTS_PG_TMP ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir()), 'wr-private-pg-'));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  const data = path.join(dir, 'data');
  const port = await freePort();
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const options = `-c port=${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off -c max_connections=60`;
  let running = false;
  const pg: PrivatePostgres = {
    port,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    start() {
      run('pg_ctl', ['-D', data, '-l', path.join(dir, 'log'), '-o', options, '-w', '-t', '60', 'start']);
      running = true;
    },
    stop() {
      run('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
      running = false;
    },
    restart() {
      pg.stop();
      pg.start();
    },
    remove() {
      try {
        if (running) run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '60', 'stop']);
      } catch {
        // Already stopped: the folder goes anyway.
      } finally {
        running = false;
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  try {
    pg.start();
  } catch (error) {
    pg.remove();
    throw error;
  }
  return pg;
}
