// The figure: with N bots (default 1,000) walking in the place, the
// page's CPU time per frame, its draw calls (one for all players), and the
// interpolation delay it settles at, measured in headless Chromium.
//
//   npm run figure -- [--bots 1000] [--seconds 20] [--warmup 5] [--json out.json] [--shot out.png]
//                     [--server-args "--world-size 2000 --cell-size 125 --view-radius 250"]
//                     [--cpu-throttle 4]
//
// --cpu-throttle N slows the page's main thread N times (Chromium's CPU
// throttling), as a saturated machine would: the figure then shows whether
// the page keeps up (its ping, how late it draws, the cells it skipped to
// catch up and how often its HUD said so). MINO_E2E_DIST serves another
// test build (an older client) to compare.
//
// With --server-args giving a --cell-size (area of interest), the page draws
// only the players in view: the figure then also reports how many that was,
// how many it tracked, view frames and cells a second and names asked.
//
// Server: MINO_SERVER_BIN, else release/mino-server where cargo builds
// (CARGO_TARGET_DIR or target/) if built, else debug/. Bots:
// release/mino-loadgen there (walker profile) if built,
// else a swarm of node bots from e2e/harness/bot.ts. The busy rule's lateness
// part is turned off (--busy-lateness-ms 0) so the browser sharing the cores
// does not get bots refused. Everything it starts is stopped at the end.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import type { MinoStats } from '../src/debug/hook.js';
import { Bot, until } from './harness/bot.js';
import { launchChromium } from './harness/browser.js';
import { cargoBin, metric, startServer, type RunningServer } from './harness/server.js';

interface Options {
  bots: number;
  seconds: number;
  warmup: number;
  json: string | null;
  shot: string | null;
  /** Extra mino-server flags (split on spaces). */
  serverArgs: string[];
  /** Slow the page's main thread this many times (1: not at all). */
  cpuThrottle: number;
}

function options(argv: string[]): Options {
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  return {
    bots: Number(get('bots') ?? 1000),
    seconds: Number(get('seconds') ?? 20),
    warmup: Number(get('warmup') ?? 5),
    json: get('json') ?? null,
    shot: get('shot') ?? null,
    serverArgs: (get('server-args') ?? '').split(' ').filter((a) => a),
    cpuThrottle: Number(get('cpu-throttle') ?? 1),
  };
}

function release(name: string): string | null {
  const p = cargoBin('release', name);
  return existsSync(p) ? p : null;
}

/** Starts the bots; returns a function that stops them. */
async function startBots(server: RunningServer, n: number): Promise<{ kind: string; stop: () => Promise<void> }> {
  const loadgen = release('mino-loadgen');
  if (loadgen) {
    const proc: ChildProcess = spawn(
      loadgen,
      ['walk', '--bots', String(n), '--ramp', '250', '--duration', '1h', '--url', server.ws, '--quiet', '--no-reconnect'],
      { stdio: 'ignore' },
    );
    const stop = async (): Promise<void> => {
      if (proc.exitCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGINT');
      const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    };
    return { kind: `mino-loadgen walk (${loadgen})`, stop };
  }
  const bots: Bot[] = [];
  for (let i = 0; i < n; i++) bots.push(await Bot.connect(server.ws, `node-${i}`));
  const turn = setInterval(() => {
    for (const b of bots) if (Math.random() < 0.4) b.walk(Math.random() * 2 - 1, Math.random() * 2 - 1);
  }, 1000);
  return {
    kind: 'node bot swarm (e2e/harness/bot.ts)',
    stop: async () => {
      clearInterval(turn);
      await Promise.allSettled(bots.map((b) => b.close()));
    },
  };
}

/** How much `count` grew a second over `samples` (one a second); NaN with fewer than two. */
function perSecond(samples: MinoStats[], count: (s: MinoStats) => number): number {
  const first = samples[0];
  const last = samples[samples.length - 1];
  return first && last && samples.length > 1 ? (count(last) - count(first)) / (samples.length - 1) : Number.NaN;
}

function summarize(samples: MinoStats[], huds: string[]) {
  const col = (f: (s: MinoStats) => number): number[] => samples.map(f).sort((a, b) => a - b);
  const median = (xs: number[]): number => xs[Math.floor(xs.length / 2)] ?? Number.NaN;
  const p95 = (xs: number[]): number => xs[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))] ?? Number.NaN;
  const first = samples[0];
  const last = samples[samples.length - 1];
  return {
    pingMsMedian: median(col((s) => s.pingMs)),
    pingMsMax: Math.max(...col((s) => s.pingMs)),
    renderLagMsMedian: median(col((s) => s.renderLagMs)),
    renderLagMsP95: p95(col((s) => s.renderLagMs)),
    framesSkipped: first && last ? (last.framesSkipped ?? Number.NaN) - (first.framesSkipped ?? Number.NaN) : Number.NaN,
    hudCatchingUpShare: huds.length ? huds.filter((h) => h.includes('catching up')).length / huds.length : Number.NaN,
    frameCpuMsMedian: median(col((s) => s.frameCpuMs)),
    frameCpuMsWorstWindowMax: Math.max(...col((s) => s.frameCpuMsMax)),
    fpsMedian: median(col((s) => s.fps)),
    drawCallsMax: Math.max(...col((s) => s.drawCalls)),
    bodyDrawCallsMin: Math.min(...col((s) => s.bodyDrawCalls)),
    bodyDrawCallsMax: Math.max(...col((s) => s.bodyDrawCalls)),
    instancesMedian: median(col((s) => s.instances)),
    interpDelayMsMedian: median(col((s) => s.interpDelayMs)),
    interpDelayMsLast: samples[samples.length - 1]?.interpDelayMs ?? Number.NaN,
    jitterMsMedian: median(col((s) => s.jitterMs)),
    renderSnaps: samples[samples.length - 1]?.renderSnaps ?? Number.NaN,
    aoi: samples[0]?.aoi ?? false,
    inViewMedian: median(col((s) => s.inView)),
    trackedMedian: median(col((s) => s.tracked)),
    viewFramesPerSecond: perSecond(samples, (s) => s.viewFrames),
    cellsPerSecond: perSecond(samples, (s) => s.cellFrames),
    namesAsked: samples[samples.length - 1]?.namesAsked ?? 0,
    namesRequests: samples[samples.length - 1]?.namesRequests ?? 0,
  };
}

async function main(): Promise<void> {
  const opt = options(process.argv.slice(2));
  const releaseServer = release('mino-server');
  if (!process.env.MINO_SERVER_BIN && releaseServer) process.env.MINO_SERVER_BIN = releaseServer;
  const server = await startServer(['--max-players', String(opt.bots + 50), '--busy-lateness-ms', '0', ...opt.serverArgs]);
  const browser = await launchChromium();
  let bots: { kind: string; stop: () => Promise<void> } | null = null;
  try {
    bots = await startBots(server, opt.bots);
    await until(`${opt.bots} bots on the server`, async () => (await metric(server, 'mino_players')) >= opt.bots, 60_000);
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(server.http);
    await page.fill('#name-input', 'figure');
    await page.press('#name-input', 'Enter');
    const stats = (): Promise<MinoStats> => page.evaluate(() => JSON.parse(JSON.stringify(window.__mino?.stats)) as MinoStats);
    await until('every player drawn (with area of interest: the page drawing)', async () => {
      const s = await stats();
      return s.aoi ? s.frames > 10 && s.instances >= 1 : s.instances >= opt.bots + 1;
    }, 30_000);
    await new Promise((r) => setTimeout(r, opt.warmup * 1000));
    if (opt.cpuThrottle > 1) {
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Emulation.setCPUThrottlingRate', { rate: opt.cpuThrottle });
      await new Promise((r) => setTimeout(r, opt.warmup * 1000));
    }
    const samples: MinoStats[] = [];
    const huds: string[] = [];
    for (let i = 0; i < opt.seconds; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      samples.push(await stats());
      huds.push((await page.locator('#hud').textContent()) ?? '');
    }
    if (opt.shot) await page.screenshot({ path: opt.shot });
    const last = samples[samples.length - 1];
    const result = {
      bots: opt.bots,
      botsFrom: bots.kind,
      server: server.proc.spawnfile,
      adapter: last?.adapter,
      viewport: '1280x720',
      seconds: opt.seconds,
      cpuThrottle: opt.cpuThrottle,
      /** The machine's 1-minute load average at the end (2 cores here: above 2 it was saturated). */
      loadAverage: loadavg()[0],
      client: process.env.MINO_E2E_DIST ?? 'dist-e2e',
      ...summarize(samples, huds),
    };
    console.log(JSON.stringify(result, null, 2));
    console.log(
      `figure: ${opt.bots} bots: frame CPU ${result.frameCpuMsMedian.toFixed(2)} ms median ` +
        `(worst frame ${result.frameCpuMsWorstWindowMax.toFixed(2)} ms), ${result.bodyDrawCallsMax} draw call for ` +
        `${result.instancesMedian} players (${result.drawCallsMax} per frame with the floor), ` +
        `interpolation delay ${result.interpDelayMsMedian.toFixed(1)} ms, ${result.fpsMedian.toFixed(0)} fps, ` +
        `ping ${result.pingMsMedian.toFixed(0)} ms median (max ${result.pingMsMax.toFixed(0)}), drawn ${result.renderLagMsMedian.toFixed(0)} ms ` +
        `behind the newest tick (p95 ${result.renderLagMsP95.toFixed(0)}), ${result.framesSkipped} cells skipped` +
        (result.aoi
          ? `; area of interest: ${result.inViewMedian} in view, ${result.trackedMedian} tracked, ` +
            `${result.viewFramesPerSecond.toFixed(0)} view frames/s carrying ${result.cellsPerSecond.toFixed(0)} cells/s, ${result.namesAsked} names asked in ${result.namesRequests} requests`
          : ''),
    );
    if (opt.json) writeFileSync(opt.json, JSON.stringify({ result, samples }, null, 2));
  } finally {
    await bots?.stop();
    await browser.close().catch(() => undefined);
    await server.stop();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
