// The page's start: check WebGPU first (a browser that cannot draw never opens
// a websocket, so it never holds a player slot), then ask for a name, then play.

import { Game, type Elements } from './app.js';
import { emptyStats } from './debug/hook.js';
import { acquireGpu, failureMessage } from './render/gpu.js';
import { askName } from './ui/name.js';
import './style.css';

function byId<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`index.html lacks #${id}`);
  return el as T;
}

function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

async function start(): Promise<void> {
  const stats = emptyStats();
  // Stats are readable from the start, so tests can see why nothing runs.
  window.__mino = { stats, worldToScreen: () => null, drawnPosition: () => null, loseDevice: () => undefined };
  const panel = byId('panel');
  const got = await acquireGpu(navigator.gpu);
  if (!got.ok) {
    stats.gpuFailure = got.failure;
    panel.textContent = failureMessage(got.failure, got.detail);
    panel.hidden = false;
    return;
  }
  stats.adapter = got.gpu.info;
  stats.deviceGeneration = 1;
  const els: Elements = {
    canvas: byId('world'),
    labels: byId('labels'),
    hud: byId('hud'),
    badge: byId('badge'),
    panel,
    chatLog: byId('chat-log'),
    chatInput: byId('chat-input'),
    players: byId('players'),
    playerCount: byId('player-count'),
  };
  const form = byId<HTMLFormElement>('name-form');
  const rename = (reason: string): void => {
    void askName(form, storage(), reason).then((name) => game.connect(name));
  };
  const game = new Game(els, got.gpu, stats, rename);
  window.__mino = game.hook;
  window.addEventListener('pagehide', () => game.leave());
  game.connect(await askName(form, storage()));
}

void start();
