// The confirmations before an action: draining a shard (what it does: its
// players moved to the other shards, or standalone every player disconnected
// and the process stopped; a warning when no other shard can take them) and
// kicking a player (with the reason it will see).

import { formatShardId } from '../../src/net/shard-id.js';
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

/** What a drain of a shard will do, as its confirmation says it. */
export interface DrainPlan {
  /** What happens, in order. */
  readonly what: string;
  /** What the operator must know first (null: nothing). */
  readonly warning: string | null;
  /** The confirming button's text. */
  readonly confirm: string;
}

/**
 * What draining `row` of `place` will do. Clustered, its players move to the
 * other shards; standalone there is no other shard: every player is
 * disconnected at once (1012, service restart) and the process exits, and so
 * does this console when that shard serves it.
 */
export function drainPlan(row: ShardRow, place: Place): DrainPlan {
  const n = `${row.players} player${row.players === 1 ? '' : 's'}`;
  if (!place.clustered) {
    return {
      what:
        `Shard ${row.id} is standalone: no other shard can take its ${n}. It stops admitting players, ` +
        'closes every player\'s connection at once (1012, service restart: their pages try to reconnect and find ' +
        'no shard until one is started again), then the process exits.',
      warning:
        'The game ends with it: nothing restarts it unless a supervisor does (scripts/play.sh ends too)' +
        (row.here ? ', and this console, which it serves, stops answering.' : '.'),
      confirm: 'Disconnect everyone and stop',
    };
  }
  const others = place.shards.filter((s) => s.id !== row.id && s.state === 'ready');
  return {
    what:
      `It stops admitting players, moves its ${n} to the other shards ` +
      '(each resumes there as itself, where it stood, at the drain rate), then exits.' +
      (row.here ? ' This console, which it serves, stops answering then: open another shard\'s.' : ''),
    warning:
      others.length > 0 ? null : 'No other shard is ready: its players have nowhere to go and will wait until one is (or until the drain times out).',
    confirm: 'Drain',
  };
}

/** Asks to confirm the drain of `row`, saying what it will do; true when confirmed. */
export async function confirmDrain(dialog: HTMLDialogElement, row: ShardRow, place: Place): Promise<boolean> {
  const plan = drainPlan(row, place);
  const set = (selector: string, text: string): void => {
    const node = dialog.querySelector(selector);
    if (node) node.textContent = text;
  };
  set('.shard', formatShardId(row.id));
  set('.what', plan.what);
  set('button[value="drain"]', plan.confirm);
  const warning = dialog.querySelector<HTMLElement>('.warning');
  if (warning) {
    warning.hidden = plan.warning === null;
    warning.textContent = plan.warning ?? '';
  }
  return (await ask(dialog)) === 'drain';
}

/** Asks for the reason to kick `player`; the reason, or null when cancelled. */
export async function askKickReason(dialog: HTMLDialogElement, player: FoundPlayer): Promise<string | null> {
  const who = dialog.querySelector('.who');
  if (who) who.textContent = `${player.name} (player ${player.id}, shard ${formatShardId(player.shard)})`;
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
