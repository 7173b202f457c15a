import { describe, expect, it } from 'vitest';
import { createProgressLine, describeCaptureProgress } from '../../src/cli/progress-line.js';

describe('snapshot progress in words', () => {
  it('says what each phase is doing, with counts', () => {
    expect(describeCaptureProgress({ account: 'a', phase: 'signing-in' })).toBe('signing in');
    expect(describeCaptureProgress({ account: 'a', phase: 'listing', page: { page: 2, totalPages: 5, items: 200, totalItems: 450 } })).toBe('listing page 2 of 5 (200 of 450 wallets)');
    expect(describeCaptureProgress({ account: 'a', phase: 'reading', walletsRead: 40, walletsTotal: 120 })).toBe('reading balances 40 of 120');
    expect(describeCaptureProgress({ account: 'a', phase: 'writing' })).toBe('writing the snapshot');
  });

  it('draws each new phase at once on a terminal, and remembers where each account got to', () => {
    const written: string[] = [];
    const line = createProgressLine({ isTTY: true, columns: 200, write: (t: string) => written.push(t) });
    line.update({ account: 'eu', phase: 'signing-in' });
    line.update({ account: 'eu', phase: 'reading', walletsRead: 1, walletsTotal: 9 });
    expect(written.map((w) => w.replace('\r\x1b[2K', ''))).toEqual(['eu: signing in', 'eu: reading balances 1 of 9']);
    expect(line.describe()).toBe('eu: reading balances 1 of 9');
    const piped: string[] = [];
    const quiet = createProgressLine({ isTTY: false, write: (t: string) => piped.push(t) });
    quiet.update({ account: 'us', phase: 'writing' });
    expect(piped).toEqual([]);
    expect(quiet.describe()).toBe('us: writing the snapshot');
  });

  it('drops an account from the line once its run finished, so neither the line nor an interruption names it', () => {
    const written: string[] = [];
    const line = createProgressLine({ isTTY: true, columns: 200, write: (t: string) => written.push(t) });
    line.update({ account: 'eu', phase: 'writing' });
    line.update({ account: 'us', phase: 'listing' });
    line.update({ account: 'eu', phase: 'finished' });
    expect(line.describe()).toBe('us: listing wallets');
    expect(written.at(-1)).toBe('\r\x1b[2Kus: listing wallets');
    // A late event of the finished account's stopped reads does not bring it back.
    line.update({ account: 'eu', phase: 'reading', walletsRead: 3, walletsTotal: 9 });
    expect(line.describe()).toBe('us: listing wallets');
    line.update({ account: 'us', phase: 'finished' });
    expect(line.describe()).toBe('');
    expect(written.at(-1)).toBe('\r\x1b[2K');
  });
});
