// The name form: the player picks a display name (1-24 characters), which is
// remembered in localStorage for the next visit.

import { MAX_NAME_CHARS, validName } from '../net/protocol.js';

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
  input.maxLength = MAX_NAME_CHARS * 2; // characters may be two UTF-16 units; validName counts properly
  input.value = input.value || remembered(storage);
  error.textContent = problem;
  form.hidden = false;
  input.focus();
  input.select();
  return new Promise((resolve) => {
    const submit = (e: Event): void => {
      e.preventDefault();
      const name = validName(input.value);
      if (!name) {
        error.textContent = `A name is 1 to ${MAX_NAME_CHARS} characters, without control characters.`;
        return;
      }
      try {
        storage?.setItem(NAME_KEY, name);
      } catch {
        // Not remembered; the game works all the same.
      }
      form.removeEventListener('submit', submit);
      form.hidden = true;
      input.blur();
      resolve(name);
    };
    form.addEventListener('submit', submit);
  });
}
