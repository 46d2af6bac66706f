// The name form: the player picks a display name (1 to MAX_NAME_CHARS
// characters, the schema's Limit.MaxNameChars: 24), which is remembered in
// localStorage for the next visit. The field stops at the limit, counted as
// the server counts (Unicode scalar values, so an emoji is one), and says how
// many are used as the player types.

import { MAX_NAME_CHARS, validName } from '../net/protocol.js';

/** What the field holds after an edit: the text (cut at MAX_NAME_CHARS characters), its length in characters, and what to say. */
export interface FittedName {
  readonly value: string;
  readonly chars: number;
  readonly note: string;
}

/** Cuts `raw` to MAX_NAME_CHARS characters (Unicode scalar values) and says how many are used. */
export function fitName(raw: string): FittedName {
  const chars = [...raw];
  const cut = chars.length > MAX_NAME_CHARS;
  const value = cut ? chars.slice(0, MAX_NAME_CHARS).join('') : raw;
  const n = Math.min(chars.length, MAX_NAME_CHARS);
  const note = n >= MAX_NAME_CHARS ? `${n} of ${MAX_NAME_CHARS} characters: the most a name may have` : `${n} of ${MAX_NAME_CHARS} characters`;
  return { value, chars: n, note };
}

/** localStorage key of the remembered name. */
export const NAME_KEY = 'mino.name';

function remembered(storage: Storage | null): string {
  try {
    return storage?.getItem(NAME_KEY) ?? '';
  } catch {
    return ''; // storage disabled
  }
}

/**
 * Shows `form` (with its text input and error line) prefilled with the
 * remembered name and resolves with the name the player submits.
 */
export function askName(form: HTMLFormElement, storage: Storage | null, problem = ''): Promise<string> {
  const input = form.querySelector('input') as HTMLInputElement;
  const error = form.querySelector('.error') as HTMLElement;
  const count = form.querySelector<HTMLElement>('.count');
  // A character may be two UTF-16 units: the field's own limit is a backstop, fit() cuts at MAX_NAME_CHARS characters.
  input.maxLength = MAX_NAME_CHARS * 2;
  const fit = (): void => {
    const f = fitName(input.value);
    if (f.value !== input.value) input.value = f.value;
    if (count) count.textContent = f.note;
  };
  input.value = input.value || remembered(storage);
  fit();
  input.addEventListener('input', fit);
  error.textContent = problem;
  form.hidden = false;
  input.focus();
  input.select();
  return new Promise((resolve) => {
    const submit = (e: Event): void => {
      e.preventDefault();
      const name = validName(input.value);
      if (!name) {
        error.textContent = `A name is 1 to ${MAX_NAME_CHARS} characters, something visible, without control or text-direction characters.`;
        return;
      }
      try {
        storage?.setItem(NAME_KEY, name);
      } catch {
        // Not remembered; the game works all the same.
      }
      form.removeEventListener('submit', submit);
      input.removeEventListener('input', fit);
      form.hidden = true;
      input.blur();
      resolve(name);
    };
    form.addEventListener('submit', submit);
  });
}
