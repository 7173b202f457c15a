import type { CaptureProgress } from '../snapshot/capture-account.js';

/** Where live progress is drawn: a terminal's stderr, or anything with the same two members. */
export interface ProgressStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(text: string): unknown;
}

/** A redrawable progress line: updated as work advances, erased when it is done. */
export interface ProgressBar {
  update(done: number, total: number): void;
  done(): void;
}

/**
 * A one-line `[#####.....] 3/10` bar redrawn in place, on a terminal only: without a stream, or
 * when it is not a TTY (a pipe, a log file, CI, a test), it draws nothing at all.
 */
export function createProgressBar(stream: ProgressStream | undefined, width = 30): ProgressBar {
  if (stream?.isTTY !== true) return { update: () => undefined, done: () => undefined };
  let drawn = false;
  return {
    update(done, total) {
      const filled = total === 0 ? width : Math.min(width, Math.round((done / total) * width));
      stream.write(`\r\x1b[2K[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`);
      drawn = true;
    },
    done() {
      if (drawn) stream.write('\r\x1b[2K');
    },
  };
}

/**
 * Live snapshot progress on a terminal: one status per account on a line redrawn in place at
 * most every 100 ms. Draws nothing without a TTY (logs and CI stay clean).
 */
export function createProgressLine(stream: ProgressStream | undefined): { update(p: CaptureProgress): void; done(): void } {
  if (stream?.isTTY !== true) return { update: () => undefined, done: () => undefined };
  const states = new Map<string, string>();
  let last = 0;
  const render = () => {
    const text = [...states].map(([account, state]) => `${account}: ${state}`).join(' | ');
    stream.write(`\r\x1b[2K${text.slice(0, (stream.columns ?? 120) - 1)}`);
  };
  return {
    update(p) {
      const state =
        p.phase === 'listing' && p.page
          ? `page ${p.page.page}/${p.page.totalPages ?? '?'}, wallets ${p.page.items}/${p.page.totalItems ?? '?'}`
          : p.phase === 'reading'
            ? `wallets read ${p.walletsRead}/${p.walletsTotal}`
            : p.phase;
      states.set(p.account, state);
      const now = Date.now();
      if (now - last >= 100) {
        last = now;
        render();
      }
    },
    done() {
      if (states.size > 0) stream.write('\r\x1b[2K');
    },
  };
}
