// Module hooks (they run on Node's loader thread): append each loaded URL to WR_MODULE_LOAD_LOG.
import { appendFileSync } from 'node:fs';

export async function load(url, context, nextLoad) {
  const log = process.env.WR_MODULE_LOAD_LOG;
  if (log) appendFileSync(log, `${url}\n`);
  return nextLoad(url, context);
}
