// The confirmations before an action: draining a shard (what it does, and a
// warning when no other shard can take its players) and kicking a player
// (with the reason it will see).

import type { FoundPlayer, Place, ShardRow } from './api.js';
import { reasonProblem } from './reason.js';

/** Shows `dialog` modally and resolves with the button pressed (its value). */
function ask(dialog: HTMLDialogElement): Promise<string> {
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue), { once: true });
    dialog.returnValue = 'cancel';
    dialog.showModal();
  });
}

/** Asks to confirm the drain of `row`; true when confirmed. */
export async function confirmDrain(dialog: HTMLDialogElement, row: ShardRow, place: Place): Promise<boolean> {
  const others = place.shards.filter((s) => s.id !== row.id && s.state === 'ready');
  const set = (selector: string, text: string): void => {
    const node = dialog.querySelector(selector);
    if (node) node.textContent = text;
  };
  set('.shard', String(row.id));
  set(
    '.what',
    `It stops admitting players, moves its ${row.players} player${row.players === 1 ? '' : 's'} to the other shards ` +
      '(each resumes there as itself, where it stood, at the drain rate), then exits.',
  );
  const warning = dialog.querySelector<HTMLElement>('.warning');
  if (warning) {
    warning.hidden = others.length > 0;
    warning.textContent = 'No other shard is ready: its players have nowhere to go and will wait until one is.';
  }
  return (await ask(dialog)) === 'drain';
}

/** Asks for the reason to kick `player`; the reason, or null when cancelled. */
export async function askKickReason(dialog: HTMLDialogElement, player: FoundPlayer): Promise<string | null> {
  const who = dialog.querySelector('.who');
  if (who) who.textContent = `${player.name} (player ${player.id}, shard ${player.shard})`;
  const input = dialog.querySelector<HTMLInputElement>('input[name="reason"]');
  const error = dialog.querySelector<HTMLElement>('.error');
  const form = dialog.querySelector('form');
  if (!input || !form) return null;
  input.value = '';
  if (error) error.textContent = '';
  const check = (e: SubmitEvent): void => {
    const button = e.submitter as HTMLButtonElement | null;
    if (button?.value !== 'kick') return;
    const problem = reasonProblem(input.value);
    if (problem) {
      e.preventDefault();
      if (error) error.textContent = problem;
      input.focus();
    }
  };
  form.addEventListener('submit', check);
  try {
    return (await ask(dialog)) === 'kick' ? input.value.trim() : null;
  } finally {
    form.removeEventListener('submit', check);
  }
}
