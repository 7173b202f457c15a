import { measureStartup } from './startup.js';
for (let i = 0; i < 2; i++) {
  const s = await measureStartup('postgres://postgres@127.0.0.1:5432/postgres');
  console.log(JSON.stringify({ node: s.nodeMs.toFixed(0), version: s.versionMs.toFixed(0), help: s.helpMs.toFixed(0), snap1: s.snapshotMs.toFixed(0), lat: s.latencyBoundMs.toFixed(0), crit: s.latencyCriticalPathMs.toFixed(0), ratio: (s.latencyBoundMs / s.latencyCriticalPathMs).toFixed(2) }));
}
process.exit(0);
