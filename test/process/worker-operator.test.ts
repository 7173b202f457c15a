import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';
import { recordCalendarIfAbsent } from '../../src/business-date/stored-calendar.js';
import { openDatabase } from '../../src/db/open-database.js';

// A second worker on the same host, as an operator starts one: the metrics port is a setting.
let t: TestDatabase;
let taken: Server;
let port: number;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  await t.handle.close();
  // The port the first worker on this host would hold.
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  port = (taken.address() as { port: number }).port;
}, 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => taken.close(() => resolve()));
  await t?.drop();
});

describe(`a second worker on the same host (${backend})`, () => {
  it('exits 2 naming RECON_METRICS_PORT when the metrics port is in use, not 1 with EADDRINUSE', async () => {
    const result = await runCliProcess(['schedule'], {
      ...t.childEnv,
      GATEWAY_API_KEY: 'key',
      GATEWAY_API_SECRET: 'secret',
      RECON_CATCH_UP: 'false',
      RECON_METRICS_PORT: String(port),
    });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`RECON_METRICS_PORT: port ${port} on 127.0.0.1 is already in use (another worker on this host?). Give each worker on a host its own RECON_METRICS_PORT`);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);

  it("exits 2 naming both time zones when started with another RECON_TIMEZONE than the database's calendar", async () => {
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const freePort = (free.address() as { port: number }).port;
    await new Promise<void>((resolve) => free.close(() => resolve()));
    const env = { ...t.childEnv, GATEWAY_API_KEY: 'key', GATEWAY_API_SECRET: 'secret', RECON_CATCH_UP: 'false', RECON_METRICS_PORT: String(freePort) };
    // The calendar the fleet follows, as the first worker that started on this database recorded it (UTC, 00:00).
    const rules = { timezone: 'UTC', cutoff: '00:00', captureWindowMs: 3 * 3_600_000, booksDeadlineMs: 12 * 3_600_000, statementDeadlineMs: 36 * 3_600_000 };
    const handle = await openDatabase(t.childEnv.DATABASE_URL ? { databaseUrl: t.childEnv.DATABASE_URL, dataDir: 'memory://', command: 'test' } : { dataDir: t.childEnv.RECON_DATA_DIR!, command: 'test' });
    try {
      await recordCalendarIfAbsent(handle.db, rules, new Date());
    } finally {
      await handle.close();
    }
    const result = await runCliProcess(['schedule'], { ...env, RECON_TIMEZONE: 'America/New_York', RECON_CUTOFF: '00:00' });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("RECON_TIMEZONE is America/New_York here, the database's calendar says UTC");
    expect(result.stderr).toContain('does not start');
    // How to change it for the fleet instead: from a business date on.
    expect(result.stderr).toContain('wallet-recon calendar set --timezone America/New_York --from DATE');
  }, 60_000);
});
