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

/** What one account's capture is doing, in words: "signing in", "listing page 2 of 5", "reading balances 40 of 120", "writing". */
export function describeCaptureProgress(p: CaptureProgress): string {
  switch (p.phase) {
    case 'signing-in':
      return 'signing in';
    case 'listing':
      return p.page ? `listing page ${p.page.page} of ${p.page.totalPages ?? '?'} (${p.page.items} of ${p.page.totalItems ?? '?'} wallets)` : 'listing wallets';
    case 'reading':
      return `reading balances ${p.walletsRead ?? 0} of ${p.walletsTotal ?? '?'}`;
    case 'writing':
      return 'writing the snapshot';
    case 'finished':
      return 'finished';
  }
}

/**
 * Live snapshot progress on a terminal: one status per account still running, on a line redrawn
 * in place at most every 100 ms. Draws nothing without a TTY (logs and CI stay clean), but still
 * knows where each running account got to.
 */
export function createProgressLine(stream: ProgressStream | undefined): { update(p: CaptureProgress): void; done(): void; describe(): string } {
  const draw = stream?.isTTY === true;
  const states = new Map<string, string>();
  const phases = new Map<string, CaptureProgress['phase']>();
  let last = 0;
  const describe = () => [...states].map(([account, state]) => `${account}: ${state}`).join(' | ');
  const render = () => {
    if (draw) stream.write(`\r\x1b[2K${describe().slice(0, (stream.columns ?? 120) - 1)}`);
  };
  return {
    update(p) {
      if (p.phase === 'finished' || phases.get(p.account) === 'finished') {
        // A finished account leaves the line (and the words of an interruption); a late event of
        // its aborted reads does not bring it back.
        const wasShown = states.delete(p.account);
        phases.set(p.account, 'finished');
        if (wasShown && draw) {
          if (states.size > 0) render();
          else stream.write('\r\x1b[2K');
        }
        return;
      }
      const state = describeCaptureProgress(p);
      // A new phase is drawn at once; counts within a phase at most every 100 ms.
      const changedPhase = phases.get(p.account) !== p.phase;
      phases.set(p.account, p.phase);
      states.set(p.account, state);
      const now = Date.now();
      if (changedPhase || now - last >= 100) {
        last = now;
        render();
      }
    },
    done() {
      if (draw && states.size > 0) stream.write('\r\x1b[2K');
    },
    /** Where each account got to, for the message of an interrupted run. */
    describe,
  };
}
