import { describe, expect, it } from 'vitest';
import { MAX_REASON_CHARS, reasonProblem } from './reason.js';

describe('a kick reason', () => {
  it('is one line of 1 to 120 characters, as the server wants it', () => {
    expect(reasonProblem('  spamming the chat ')).toBeNull();
    expect(reasonProblem('é'.repeat(MAX_REASON_CHARS))).toBeNull();
    expect(reasonProblem('   ')).toMatch(/Say why/);
    expect(reasonProblem('x'.repeat(MAX_REASON_CHARS + 1))).toMatch(/120/);
    expect(reasonProblem('two\nlines')).toMatch(/one line/i);
  });
});
