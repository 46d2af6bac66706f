// The page's start: take the access token out of the address bar (if a
// sign-in page handed one over in the fragment), check WebGPU (a browser that
// cannot draw never opens a websocket, so it never holds a player slot), then
// ask for a name, then play.

import { Game, type Elements } from './app.js';
import { installTestHook } from './debug/test-hook.js';
import { authMessage } from './net/policy.js';
import { takeToken } from './net/token.js';
import { CloseCode } from './generated/mino/wire.js';
import { acquireGpu, failureMessage } from './render/gpu.js';
import { askName } from './ui/name.js';
import { foldable } from './ui/panels.js';
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
  // First of all, so the token is in the address bar for no longer than it takes to load.
  const token = takeToken(location, history);
  // Test builds only (see vite.config.ts): installed first, so tests can see
  // why nothing runs. In a production build this is `null` and the hook
  // module is left out of the bundle.
  const hook = __MINO_TEST_HOOKS__ ? installTestHook(window) : null;
  const panel = byId('panel');
  if (token.kind === 'too-long') {
    panel.textContent = authMessage(CloseCode.AuthMalformed) ?? 'Sign-in damaged on the way — sign in again.';
    panel.hidden = false;
    return;
  }
  const got = await acquireGpu(navigator.gpu, window.isSecureContext);
  if (!got.ok) {
    hook?.noGpu(got.failure);
    panel.textContent = failureMessage(got.failure, got.detail);
    panel.hidden = false;
    return;
  }
  hook?.gpu(got.gpu.info);
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
    playersTitle: byId('players-title'),
    minimap: byId('minimap'),
    side: byId('side'),
  };
  const form = byId<HTMLFormElement>('name-form');
  const rename = (reason: string): void => {
    void askName(form, storage(), reason).then((name) => game.connect(name));
  };
  const game = new Game(els, got.gpu, rename, token.kind === 'token' ? token.token : null);
  foldable(byId('roster'), byId<HTMLButtonElement>('roster-fold'), 'players', storage(), () => game.measureSide());
  foldable(byId('chat'), byId<HTMLButtonElement>('chat-fold'), 'chat', storage(), () => game.measureSide());
  hook?.attach(game);
  window.addEventListener('pagehide', () => game.leave());
  game.connect(await askName(form, storage()));
}

void start();
