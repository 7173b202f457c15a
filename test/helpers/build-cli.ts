import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * Bundles the CLI before the suite, so child-process tests run what users run (bin/ over dist/)
 * and always the sources as they are now; the bundle takes well under a second.
 */
export default function buildCli(): void {
  const root = path.join(import.meta.dirname, '..', '..');
  execFileSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });
}
