import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/logger.js';

/** A real pino logger writing JSON lines into memory, so tests can read exactly what would be logged. */
export function captureLogs(level = 'trace'): { logger: Logger; text(): string; lines(): Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const logger = createLogger({ level, destination });
  return {
    logger,
    text: () => chunks.join(''),
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}
