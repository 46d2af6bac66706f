// The display name and chat line rules, as the server's (schema/src/client.rs,
// validate_name and chat_line, whose unit tests have the same cases).
import { describe, expect, it } from 'vitest';
import { chatLine, validName } from './protocol.js';

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

describe('chat lines', () => {
  it('drops embeddings and overrides, cuts stacked marks, refuses lines with nothing visible (the server test cases)', () => {
    const cases: [string, string | null][] = [
      ['  hi  ', 'hi'],
      ['a\tb', 'a b'],
      ['\u202eevil\u202c text', 'evil text'],
      ['\u2067x\u2069', 'x'],
      ['\u200fshalom', '\u200fshalom'],
      ['\u200b\u200b', null],
      ['\u2800', null],
      ['\u202e', null],
      ['   ', null],
      ['e\u0301\u0302\u0303\u0304\u0305\u0306!', 'e\u0301\u0302\u0303\u0304!'],
      ['caf\u00e9', 'caf\u00e9'],
      ['\u0430\u0488\u0488\u0488\u0488\u0488\u0489', '\u0430\u0488\u0488\u0488\u0488'],
      ['\u05d0\u0591\u0592\u0593\u0594\u0595\u0596', '\u05d0\u0591\u0592\u0593\u0594'],
      ['\u0e01\u0e34\u0e35\u0e36\u0e37\u0e38', '\u0e01\u0e34\u0e35\u0e36\u0e37'],
    ];
    for (const [raw, line] of cases) expect(chatLine(raw), JSON.stringify(raw)).toBe(line);
  });
});
