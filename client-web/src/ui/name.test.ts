// The name field's limit: the schema's MaxNameChars characters, counted as
// the server counts them, said as the player types.
import { describe, expect, it } from 'vitest';
import { Limit } from '../generated/mino/wire.js';
import { fitName } from './name.js';

describe('name field', () => {
  it('stops at the schema limit (24 characters) and says so', () => {
    expect(Limit.MaxNameChars).toBe(24);
    const long = 'abcdefghijklmnopqrstuvwxyz0123456789abcdefghijkl'; // 48: what the field used to take
    const f = fitName(long);
    expect(f.value).toBe(long.slice(0, 24));
    expect(f.chars).toBe(24);
    expect(f.note).toBe('24 of 24 characters: the most a name may have');
  });

  it('counts characters as the server does: an emoji or an accent is one', () => {
    const name = '🦊'.repeat(30);
    const f = fitName(name);
    expect([...f.value]).toHaveLength(24);
    expect(f.value.length).toBe(48);
    expect(fitName('Zoë').note).toBe('3 of 24 characters');
    expect(fitName('').note).toBe('0 of 24 characters');
  });
});
