// The display name rule, as the server's (schema/src/client.rs,
// validate_name, whose unit test has the same cases).
import { describe, expect, it } from 'vitest';
import { validName } from './protocol.js';

describe('display names', () => {
  it('refuses control and bidirectional formatting characters, and names with nothing visible', () => {
    for (const bad of ['', '   ', 'x'.repeat(25), 'a\u0007b', '\u202eevil', 'a\u2066b', '\u200fx', '\u200b', ' \u200b\u2060 ', '\u3164', '\ufe0f\u00ad', '\u2800\u2800', '\ufeff' + 'x'.repeat(24)]) {
      expect(validName(bad), JSON.stringify(bad)).toBeNull();
    }
  });

  it('takes any other name, trimmed: accents, emoji and their joiners, right-to-left scripts', () => {
    for (const good of ['Zoë 🎮', '👨\u200d👩\u200d👧', 'שלום', '❤\ufe0f', 'a\u200bb', 'é'.repeat(24)]) {
      expect(validName(` ${good} `), JSON.stringify(good)).toBe(good);
    }
  });

  it('trims white space as Unicode (and Rust) count it: U+0085 goes, U+FEFF stays', () => {
    expect(validName('\u0085bob\u0085')).toBe('bob');
    expect(validName('bob\ufeff')).toBe('bob\ufeff');
  });
});
