// The Colyseus side's tester: N players of the walking game through the
// official SDK (@colyseus/sdk), each turning to a new random heading every
// 1 to 3 s (mino-loadgen's walker profile), spread over worker processes so
// that one Node thread is never the bottleneck. Every message a client
// receives is counted (payload bytes) and every state patch timed (the gap
// since the client's previous patch) and its protocol code read; `--decode
// observers` (the default) hands the observers' (the first `--observers`
// clients') to the SDK, decoded and applied to the client's state as a game
// would, the others skipping that; `--decode all` every client's (past
// about 200 players on a 2-core machine the tester then falls behind: its
// clients' seat reservations expire while it decodes).
//
// usage: node tester.js --url ws://HOST:PORT --players N [--ramp 100]
//          [--settle 2] [--hold 20] [--workers 2] [--decode observers|all]
//          [--observers 20] [--json FILE]
// Progress goes to stdout as JSON lines, one an event: {"event":"joined"},
// {"event":"hold","seconds":S} when the measured hold starts, and
// {"event":"held",...} with the figures when it ends (also written to
// --json). The figures: players asked, connected through the hold, seconds,
// updates (patches received), bytes, gap_ms {p50, p95, p99, max, count},
// the tester's CPU (seconds, cores it may use, percent of them), and what
// the observers saw (the state's player count, mean).

import { Client } from "@colyseus/sdk";
import { fork } from "node:child_process";
import { availableParallelism } from "node:os";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

/** Colyseus's ROOM_STATE_PATCH protocol code, and the mask of a code's bits. */
const ROOM_STATE_PATCH = 15;
const CODE_MASK = 0x3f;
/** The gap histogram: 0.1 ms buckets up to 5 s (longer gaps count in the last). */
const BUCKET_MS = 0.1;
const BUCKETS = 50_000;

const { values: opt } = parseArgs({
  options: {
    url: { type: "string", default: "ws://127.0.0.1:2567" },
    players: { type: "string", default: "100" },
    ramp: { type: "string", default: "100" },
    settle: { type: "string", default: "2" },
    hold: { type: "string", default: "20" },
    workers: { type: "string", default: "2" },
    decode: { type: "string", default: "observers" },
    observers: { type: "string", default: "20" },
    json: { type: "string" },
    worker: { type: "boolean", default: false },
  },
});

if (opt.worker) {
  worker();
} else {
  await parent();
}

/** The hold's figures of one worker's clients. */
function emptyFigures() {
  return { connected: 0, updates: 0, bytes: 0, hist: new Uint32Array(BUCKETS), max: 0, cpuUs: 0, statePlayers: [] };
}

/** Joins the walking room, trying again (up to 5 times, a second apart) when the matchmaker does not answer. */
async function joinRetrying(sdk) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await sdk.joinOrCreate("walk");
    } catch (e) {
      if (attempt >= 5) throw e;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

/** A worker: joins its clients, measures between "start" and "stop". */
function worker() {
  const clients = [];
  let measuring = false;
  let figures = emptyFigures();
  let cpuAt = process.cpuUsage();

  const join = async ({ url, count, rate, decodeAll, observers }) => {
    const sdk = new Client(url);
    const start = Date.now();
    for (let i = 0; i < count; i++) {
      const at = start + (i * 1000) / rate;
      await new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));
      const decodes = decodeAll || i < observers;
      joinRetrying(sdk).then((room) => {
        const c = { room, decodes, lastPatch: 0, turnAt: 0, open: true };
        const apply = room.connection.events.onmessage;
        room.connection.events.onmessage = (event) => {
          const data = event.data;
          const code = new Uint8Array(data, 0, 1)[0] & CODE_MASK;
          if (code === ROOM_STATE_PATCH) {
            const now = performance.now();
            if (measuring) {
              figures.updates++;
              figures.bytes += data.byteLength;
              if (c.lastPatch > 0) {
                const gap = now - c.lastPatch;
                figures.hist[Math.min(BUCKETS - 1, Math.floor(gap / BUCKET_MS))]++;
                if (gap > figures.max) figures.max = gap;
              }
            }
            c.lastPatch = now;
            if (!c.decodes) return;
          } else if (measuring) {
            figures.bytes += data.byteLength;
          }
          apply(event);
        };
        room.onLeave(() => (c.open = false));
        clients.push(c);
      }, (e) => process.send({ event: "error", message: String(e?.message ?? e) }));
    }
  };

  // Walkers turn every 1 to 3 s.
  setInterval(() => {
    const now = Date.now();
    for (const c of clients) {
      if (c.open && now >= c.turnAt) {
        c.room.send("heading", Math.random() * 2 * Math.PI);
        c.turnAt = now + 1000 + Math.random() * 2000;
      }
    }
  }, 100);

  process.on("message", async (m) => {
    if (m.cmd === "join") {
      await join(m);
    } else if (m.cmd === "count") {
      process.send({ event: "count", connected: clients.filter((c) => c.open).length });
    } else if (m.cmd === "start") {
      figures = emptyFigures();
      for (const c of clients) c.lastPatch = 0;
      cpuAt = process.cpuUsage();
      measuring = true;
    } else if (m.cmd === "stop") {
      measuring = false;
      const cpu = process.cpuUsage(cpuAt);
      figures.cpuUs = cpu.user + cpu.system;
      figures.connected = clients.filter((c) => c.open).length;
      figures.statePlayers = clients.filter((c) => c.decodes && c.open).map((c) => c.room.state?.players?.size ?? 0);
      process.send({ event: "figures", figures: { ...figures, hist: Array.from(figures.hist) } });
    } else if (m.cmd === "leave") {
      // Bounded: a swamped server may never answer.
      const left = Promise.allSettled(clients.map((c) => c.room.leave(true)));
      await Promise.race([left, new Promise((r) => setTimeout(r, 5000))]);
      process.exit(0);
    }
  });
  process.send({ event: "ready" });
}

/** Percentiles of a merged histogram, ms (nearest rank, a bucket's upper edge). */
function summary(hist, max) {
  const count = hist.reduce((a, b) => a + b, 0);
  if (count === 0) return { p50: 0, p95: 0, p99: 0, max: 0, count: 0 };
  const at = (q) => {
    const rank = Math.max(1, Math.ceil(q * count));
    let seen = 0;
    for (let i = 0; i < hist.length; i++) {
      seen += hist[i];
      if (seen >= rank) return Math.round((i + 1) * BUCKET_MS * 100) / 100;
    }
    return max;
  };
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: Math.round(max * 100) / 100, count };
}

async function parent() {
  const players = Number(opt.players);
  const workers = Math.max(1, Number(opt.workers));
  const decodeAll = opt.decode === "all";
  const out = (event) => console.log(JSON.stringify(event));
  const kids = [];
  const waiting = new Map();
  const next = (kid, event) =>
    new Promise((resolve) => {
      waiting.set(`${kids.indexOf(kid)}:${event}`, resolve);
    });
  for (let i = 0; i < workers; i++) {
    const kid = fork(fileURLToPath(import.meta.url), ["--worker"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    kids.push(kid);
    kid.on("message", (m) => {
      if (m.event === "error") {
        console.error(`tester: a client failed to join: ${m.message}`);
        return;
      }
      const key = `${kids.indexOf(kid)}:${m.event}`;
      const resolve = waiting.get(key);
      waiting.delete(key);
      resolve?.(m);
    });
  }
  await Promise.all(kids.map((k) => next(k, "ready")));
  const share = (i) => Math.floor(players / workers) + (i < players % workers ? 1 : 0);
  const observersEach = Math.ceil(Number(opt.observers) / workers);
  kids.forEach((k, i) =>
    k.send({ cmd: "join", url: opt.url, count: share(i), rate: Number(opt.ramp) / workers, decodeAll, observers: observersEach }),
  );
  const deadline = Date.now() + (players / Number(opt.ramp) + 60) * 1000;
  let connected = 0;
  while (connected < players && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
    const counts = await Promise.all(kids.map((k) => { const p = next(k, "count"); k.send({ cmd: "count" }); return p; }));
    connected = counts.reduce((a, m) => a + m.connected, 0);
    if (process.env.TESTER_DEBUG) console.error(`joined ${connected} of ${players}`);
  }
  out({ event: "joined", connected });
  await new Promise((r) => setTimeout(r, Number(opt.settle) * 1000));
  const hold = Number(opt.hold);
  const cpuAt = process.cpuUsage();
  const t0 = performance.now();
  kids.forEach((k) => k.send({ cmd: "start" }));
  out({ event: "hold", seconds: hold });
  await new Promise((r) => setTimeout(r, hold * 1000));
  const parts = await Promise.all(kids.map((k) => { const p = next(k, "figures"); k.send({ cmd: "stop" }); return p; }));
  const seconds = (performance.now() - t0) / 1000;
  const own = process.cpuUsage(cpuAt);
  const hist = new Uint32Array(BUCKETS);
  let max = 0;
  const sum = { connected: 0, updates: 0, bytes: 0, cpuUs: own.user + own.system, statePlayers: [] };
  for (const { figures: f } of parts) {
    f.hist.forEach((v, i) => (hist[i] += v));
    max = Math.max(max, f.max);
    sum.connected += f.connected;
    sum.updates += f.updates;
    sum.bytes += f.bytes;
    sum.cpuUs += f.cpuUs;
    sum.statePlayers.push(...f.statePlayers);
  }
  const cores = Math.min(workers, availableParallelism());
  const cpuS = sum.cpuUs / 1e6;
  const observed = sum.statePlayers;
  const result = {
    event: "held",
    players,
    connected: sum.connected,
    seconds: Math.round(seconds * 1000) / 1000,
    updates: sum.updates,
    bytes: sum.bytes,
    gap_ms: summary(hist, max),
    tester_cpu_s: Math.round(cpuS * 1000) / 1000,
    tester_cores: cores,
    tester_cpu_pct: Math.round((cpuS / seconds / cores) * 10000) / 100,
    decode: decodeAll ? "all" : "observers",
    decoding_clients: observed.length,
    state_players_mean: observed.length ? observed.reduce((a, b) => a + b, 0) / observed.length : null,
  };
  if (opt.json) writeFileSync(opt.json, JSON.stringify(result, null, 2) + "\n");
  out(result);
  const gone = Promise.all(kids.map((k) => new Promise((r) => { k.on("exit", r); k.send({ cmd: "leave" }); })));
  await Promise.race([gone, new Promise((r) => setTimeout(r, 10_000))]);
  for (const k of kids) k.kill("SIGKILL");
  process.exit(0);
}
