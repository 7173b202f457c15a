import { describe, expect, it } from 'vitest';
import { HashGate } from '../../src/console/hash-gate.js';

/** A task that runs until released, recording when it started. */
function pending(log: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { task: async () => void (log.push(name), await done), release };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('bounded, fair password hashing', () => {
  it('runs one check per address at a time, so another address starts at once beside a burst', async () => {
    const gate = new HashGate(2, 32, 5);
    const log: string[] = [];
    const burst = Array.from({ length: 5 }, (_, i) => pending(log, `a${i}`));
    const runs = burst.map((b) => gate.reserve('10.0.0.1')!.run(b.task));
    const real = pending(log, 'b0');
    const realRun = gate.reserve('10.0.0.2')!.run(real.task);
    await tick();
    expect(log).toEqual(['a0', 'b0']);
    real.release();
    await realRun;
    burst[0]!.release();
    await tick();
    expect(log).toEqual(['a0', 'b0', 'a1']);
    for (const b of burst) b.release();
    await Promise.all(runs);
    expect(log).toEqual(['a0', 'b0', 'a1', 'a2', 'a3', 'a4']);
  });

  it('refuses at once beyond the per-address and the overall limit, and makes room again when checks end', async () => {
    const gate = new HashGate(1, 2, 2);
    const log: string[] = [];
    const a = [pending(log, 'a0'), pending(log, 'a1')];
    const runs = a.map((p) => gate.reserve('a')!.run(p.task));
    expect(gate.hasRoom('a')).toBe(false);
    expect(gate.reserve('a')).toBeUndefined();
    const b = pending(log, 'b0');
    const bRun = gate.reserve('b')!.run(b.task);
    // Two waiting (a1, b0): the queue is full for everyone.
    expect(gate.reserve('c')).toBeUndefined();
    a[0]!.release();
    await tick();
    // Turns go address by address: b before a's second.
    expect(log).toEqual(['a0', 'b0']);
    b.release();
    a[1]!.release();
    await Promise.all([...runs, bRun]);
    expect(log).toEqual(['a0', 'b0', 'a1']);
    expect(gate.hasRoom('a')).toBe(true);
    expect(gate.hasRoom('c')).toBe(true);
  });

  it('frees its place when a check fails', async () => {
    const gate = new HashGate(1, 1, 1);
    await expect(gate.reserve('a')!.run(async () => Promise.reject(new Error('scrypt failed')))).rejects.toThrow('scrypt failed');
    expect(gate.hasRoom('a')).toBe(true);
    await expect(gate.reserve('a')!.run(async () => 42)).resolves.toBe(42);
  });
});
