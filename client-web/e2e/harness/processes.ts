// Child processes of the end-to-end tests that are not mino-server (Redis,
// nginx): started on loopback, their output kept for failure messages, killed
// by their own pid (or process group) when stopped or when the runner exits.

import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** A started helper process. */
export interface Child {
  readonly proc: ChildProcess;
  /** Everything it printed so far. */
  output(): string;
  /** Sends `signal` (SIGTERM by default), then SIGKILL after `graceMs`; resolves once it exited. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

/** Running children, and whether each leads a process group of its own. */
const running = new Map<ChildProcess, boolean>();
process.on('exit', () => {
  for (const [p, group] of running) signal(p, group, 'SIGKILL');
});

/** Sends `sig` to `proc`, or to its whole process group (its own children too). */
function signal(proc: ChildProcess, group: boolean, sig: NodeJS.Signals): void {
  try {
    if (group && proc.pid !== undefined) process.kill(-proc.pid, sig);
    else proc.kill(sig);
  } catch {
    // Already gone.
  }
}

/**
 * Spawns `bin args` with stdout and stderr captured; `what` names it in
 * errors. With `group`, the child leads a process group of its own and every
 * signal goes to the group, so processes it forks (nginx's workers) never
 * outlive it.
 */
export function spawnChild(what: string, bin: string, args: string[], group = false): Child {
  const proc = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: group });
  running.set(proc, group);
  let log = '';
  proc.stdout?.on('data', (c: Buffer) => (log += c.toString()));
  proc.stderr?.on('data', (c: Buffer) => (log += c.toString()));
  proc.on('error', (e) => (log += `${what}: ${e.message}\n`));
  const exited = new Promise<void>((r) => {
    if (proc.exitCode !== null || proc.signalCode !== null) r();
    else proc.once('exit', () => r());
  });
  void exited.then(() => running.delete(proc));
  return {
    proc,
    output: () => log,
    stop: async (sig = 'SIGTERM', graceMs = 3000) => {
      if (proc.exitCode === null && proc.signalCode === null) {
        signal(proc, group, sig);
        const t = setTimeout(() => signal(proc, group, 'SIGKILL'), graceMs);
        await exited;
        clearTimeout(t);
      }
      // What the group still holds once its leader is gone (a worker that outlived its master).
      if (group) signal(proc, group, 'SIGKILL');
    },
  };
}

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picked it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => (port ? resolve(port) : reject(new Error('no port'))));
    });
  });
}

/** Whether the child has exited. */
export function exited(child: Child): boolean {
  return child.proc.exitCode !== null || child.proc.signalCode !== null;
}
