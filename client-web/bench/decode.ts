// The browser's decode cost of a tick's view frame with ~165 players in view
// (issue 25's figure), measured in Node: Held.apply on the bytes of
// ServerMessage.view, then each updated cell's players read in world units,
// as the page does, 165 players in 9 cells of one shard; and without reading
// the players (bench/decode-core.ts). Protocol 3's control, measured before
// the page left it: protocol 4 took 0.68x its time (client-web/README.md).
// The same frames in real Chromium: `npm run bench:decode:browser`.
//
//   cd client-web && npm run bench:decode [-- ROUNDS]
//
// Each case runs warm, then the cases take turns for ROUNDS rounds of BATCH
// frames each, timed in the process's CPU time (process.cpuUsage: on a
// shared machine, time this process ran, not time it waited); it prints each
// case's median microseconds a frame over the rounds, and the first and
// third quartiles (the spread says how noisy the machine was).
import { formatResults, runDecodeBench } from './decode-core.js';

const ROUNDS = Number(process.argv[2] ?? 31);
const cpuUs = (): number => {
  const t = process.cpuUsage();
  return t.user + t.system;
};
console.log(formatResults(runDecodeBench(ROUNDS, cpuUs), ROUNDS, 'CPU'));
