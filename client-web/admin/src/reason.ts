// A kick's reason, checked as the server checks it (server/src/order.rs):
// one line, 1 to 120 characters once trimmed. Pure.

/** Longest reason, characters. */
export const MAX_REASON_CHARS = 120;

/** What is wrong with `text` as a kick reason, or null when it is fine. */
export function reasonProblem(text: string): string | null {
  const t = text.trim();
  if (t.length === 0) return 'Say why: the player sees the reason.';
  if ([...t].length > MAX_REASON_CHARS) return `At most ${MAX_REASON_CHARS} characters.`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(t)) return 'One line of text, without control characters.';
  return null;
}
