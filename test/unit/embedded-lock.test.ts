import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireDataDirLock } from '../../src/db/embedded-lock.js';
import { LockHeldError } from '../../src/errors.js';

const freshDir = () => mkdtempSync(path.join(tmpdir(), 'wr-lock-'));

describe('embedded database lock', () => {
  it('lets one holder in and names it to the next', () => {
    const dir = freshDir();
    const release = acquireDataDirLock(dir, 'wallet-recon snapshot');
    // This process is alive, so even its own second attempt is refused.
    expect(() => acquireDataDirLock(dir, 'wallet-recon migrate')).toThrow(LockHeldError);
    expect(() => acquireDataDirLock(dir, 'wallet-recon migrate')).toThrow(new RegExp(`pid ${process.pid} on ${hostname()}, "wallet-recon snapshot"`));
    release();
    const again = acquireDataDirLock(dir, 'wallet-recon migrate');
    again();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('takes over a lock left by a dead process, and an unreadable one', () => {
    const dir = freshDir();
    writeFileSync(path.join(dir, 'wallet-recon.lock'), JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), command: 'x', since: '2026-01-01T00:00:00Z' }));
    acquireDataDirLock(dir, 'a')();
    writeFileSync(path.join(dir, 'wallet-recon.lock'), '{"pi');
    acquireDataDirLock(dir, 'b')();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('never takes over a lock held on another host', () => {
    const dir = freshDir();
    writeFileSync(path.join(dir, 'wallet-recon.lock'), JSON.stringify({ pid: 1, host: 'other-host', command: 'wallet-recon schedule', since: '2026-01-01T00:00:00Z' }));
    expect(() => acquireDataDirLock(dir, 'a')).toThrow(/pid 1 on other-host/);
  });
});

describe('embedded database lock after a restart', () => {
  it('takes over a lock naming its own pid that this process does not hold (a restarted container is pid 1 again)', () => {
    const dir = freshDir();
    writeFileSync(path.join(dir, 'wallet-recon.lock'), JSON.stringify({ pid: process.pid, host: hostname(), command: 'wallet-recon schedule', since: '2026-01-01T00:00:00Z' }));
    const release = acquireDataDirLock(dir, 'wallet-recon snapshot');
    expect(() => acquireDataDirLock(dir, 'wallet-recon runs')).toThrow(LockHeldError);
    release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('takes over a lock whose pid now belongs to another process (pid reused), but not one whose process is the writer', () => {
    const dir = freshDir();
    // pid 1 is alive here, but it is not the process that wrote this lock: its start time differs.
    writeFileSync(path.join(dir, 'wallet-recon.lock'), JSON.stringify({ pid: 1, host: hostname(), command: 'x', since: '2026-01-01T00:00:00Z', processStart: '1' }));
    acquireDataDirLock(dir, 'a')();
    const other = freshDir();
    writeFileSync(path.join(other, 'wallet-recon.lock'), JSON.stringify({ pid: 1, host: hostname(), command: 'wallet-recon schedule', since: '2026-01-01T00:00:00Z' }));
    expect(() => acquireDataDirLock(other, 'a')).toThrow(/pid 1 on .*"wallet-recon schedule"/);
  });
});
