import type { CaptureProgress } from '../snapshot/capture-account.js';

/**
 * Live progress on a terminal: one status line per account, redrawn in place at most
 * every 100 ms. Does nothing when stderr is not a TTY (logs and CI stay clean).
 */
export function createProgressLine(stream: NodeJS.WriteStream = process.stderr): { update(p: CaptureProgress): void; done(): void } {
  if (!stream.isTTY) return { update: () => undefined, done: () => undefined };
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
