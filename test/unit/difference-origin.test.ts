import { describe, expect, it } from 'vitest';
import { differenceOrigin, type OriginDay } from '../../src/cases/difference-origin.js';

const day = (date: string, status: string, gateway: bigint | null, books: bigint | null, booksEntries?: bigint): OriginDay => ({
  date,
  status,
  gateway,
  books,
  difference: gateway === null || books === null ? null : gateway - books,
  ...(booksEntries === undefined ? {} : { booksEntries }),
});

describe('where a gateway difference started', () => {
  it('starts at the last matched date before the case, names the date the difference appeared and each date it changed, with both movements', () => {
    const days = [
      day('2026-11-10', 'matched', 100_000n, 100_000n),
      day('2026-11-11', 'matched', 150_000n, 150_000n),
      // The gateway took in 123.45 more than the books booked.
      day('2026-11-12', 'break', 162_345n, 150_000n),
      day('2026-11-13', 'break', 172_345n, 160_000n),
      // Another 10.00 the books have and the gateway does not.
      day('2026-11-16', 'break', 172_345n, 161_000n),
    ];
    const origin = differenceOrigin(days, '2026-11-12');
    expect(origin.lastMatchedOn).toBe('2026-11-11');
    expect(origin.rows.map((r) => r.date)).toEqual(['2026-11-11', '2026-11-12', '2026-11-13', '2026-11-16']);
    expect(origin.rows[0]).toMatchObject({ gatewayMovement: 50_000n, booksMovement: 50_000n, booksMovementFrom: 'balances', difference: 0n, change: null });
    expect(origin.rows[1]).toMatchObject({ gatewayMovement: 12_345n, booksMovement: 0n, difference: 12_345n, change: 12_345n });
    expect(origin.rows[2]).toMatchObject({ gatewayMovement: 10_000n, booksMovement: 10_000n, difference: 12_345n, change: 0n });
    expect(origin.appeared).toEqual({ date: '2026-11-12', from: 0n, to: 12_345n, gatewayMovement: 12_345n, booksMovement: 0n });
    expect(origin.changes).toEqual([{ date: '2026-11-16', from: 12_345n, to: 11_345n, gatewayMovement: 0n, booksMovement: 1_000n }]);
  });

  it("takes the books' movement from the sum of the date's entries where they were imported", () => {
    const origin = differenceOrigin([day('2026-11-02', 'matched', 500n, 500n), day('2026-11-03', 'break', 900n, 700n, 150n)], '2026-11-03');
    expect(origin.rows[1]).toMatchObject({ gatewayMovement: 400n, booksMovement: 150n, booksMovementFrom: 'entries' });
    expect(origin.appeared?.date).toBe('2026-11-03');
  });

  it('without a matched date on record, starts at the first date and measures from no difference; a date with a side missing changes nothing', () => {
    const days = [day('2026-11-05', 'break', 300n, 200n), day('2026-11-04', 'break', 300n, 200n), day('2026-11-06', 'missing_in_gateway', null, 200n), day('2026-11-09', 'break', 350n, 200n)];
    const origin = differenceOrigin(days, '2026-11-04');
    expect(origin.lastMatchedOn).toBeNull();
    expect(origin.rows.map((r) => r.date)).toEqual(['2026-11-04', '2026-11-05', '2026-11-06', '2026-11-09']);
    expect(origin.rows[0]).toMatchObject({ gatewayMovement: null, booksMovement: null, booksMovementFrom: null, change: null });
    expect(origin.rows[2]).toMatchObject({ gatewayMovement: null, difference: null, change: null });
    // The change of the 9th is measured against the last difference known (the 5th's).
    expect(origin.rows[3]).toMatchObject({ gatewayMovement: null, change: 50n });
    expect(origin.appeared).toMatchObject({ date: '2026-11-04', from: 0n, to: 100n });
    expect(origin.changes).toEqual([{ date: '2026-11-09', from: 100n, to: 150n, gatewayMovement: null, booksMovement: 0n }]);
  });

  it('ignores a matched date after the case opened as a baseline, and measures from a tolerated difference of the last match', () => {
    const days = [day('2026-11-02', 'matched', 1_001n, 1_000n), day('2026-11-03', 'break', 1_101n, 1_000n), day('2026-11-04', 'matched', 1_000n, 1_000n)];
    const origin = differenceOrigin(days, '2026-11-03');
    expect(origin.lastMatchedOn).toBe('2026-11-02');
    expect(origin.appeared).toMatchObject({ date: '2026-11-03', from: 1n, to: 101n });
    expect(origin.changes).toEqual([{ date: '2026-11-04', from: 101n, to: 0n, gatewayMovement: -101n, booksMovement: 0n }]);
  });

  it('gives no appearance when every date agrees with the last match', () => {
    const origin = differenceOrigin([day('2026-11-02', 'matched', 5n, 5n), day('2026-11-03', 'explained', 5n, 5n)], '2026-11-03');
    expect(origin.appeared).toBeNull();
    expect(origin.changes).toEqual([]);
  });
});
