// The verifier's table layouts and the protocol's numbers are generated from
// schema/mino.fbs (schema/tests/codegen.rs); these tests tie them to flatc's
// own TypeScript output and to the encoders: every union member has a layout,
// and every message this client encodes verifies against the generated one.
import { describe, expect, it } from 'vitest';
import { CLIENT_MESSAGE, SERVER_MESSAGE, type TableLayout } from '../generated/mino/wire-layout.js';
import { ClientBody, ClientVerifierLimit, Limit, ServerBody } from '../generated/mino/wire.js';
import { decodeClientForTest } from '../testing/client-decode.js';
import {
  MAX_CHAT_CHARS,
  MAX_NAMES_REQUEST_IDS,
  MAX_NAME_CHARS,
  encodeChat,
  encodeHello,
  encodeInput,
  encodeNamesRequest,
  encodePing,
} from './protocol.js';
import { verifyRoot } from './verify.js';

/** The union members of a root layout's body field. */
function members(root: TableLayout): ReadonlyMap<number, TableLayout> {
  const body = root.fields.find((f) => f.name === 'body');
  if (body?.kind !== 'union') throw new Error(`${root.name} has no union body`);
  return body.members;
}

/** Numeric members of a flatc TypeScript enum, without NONE. */
function unionValues(e: Record<string, string | number>): [string, number][] {
  return Object.entries(e).filter((kv): kv is [string, number] => typeof kv[1] === 'number' && kv[1] !== 0);
}

describe('generated layouts', () => {
  it.each([
    ['ServerMessage', SERVER_MESSAGE, ServerBody],
    ['ClientMessage', CLIENT_MESSAGE, ClientBody],
  ] as const)('%s has a layout for every member of its union, by name', (_name, root, body) => {
    const m = members(root);
    const values = unionValues(body);
    expect(m.size).toBe(values.length);
    for (const [name, value] of values) expect(m.get(value)?.name).toBe(name);
  });

  it('every message the client encodes verifies against the client layout', () => {
    const limits = { maxDepth: ClientVerifierLimit.MaxDepth, maxTables: ClientVerifierLimit.MaxTables };
    const messages = [
      encodeHello('é'.repeat(MAX_NAME_CHARS), new Uint8Array(Limit.MaxTicketBytes).fill(7)),
      encodeHello('ann'),
      encodeInput(3, 0.6, -0.8),
      encodeChat('x'.repeat(MAX_CHAT_CHARS)),
      encodePing(1234.5),
      encodeNamesRequest([]),
      encodeNamesRequest(Array.from({ length: MAX_NAMES_REQUEST_IDS }, (_, i) => 0xffff_ffff - i)),
    ];
    for (const bytes of messages) {
      expect(() => verifyRoot(bytes, CLIENT_MESSAGE, limits)).not.toThrow();
      expect(bytes.length).toBeLessThanOrEqual(Limit.MaxClientMessageBytes);
    }
  });
});

describe('names request', () => {
  it('carries the ids, full 32-bit ones too, and never more than the limit', () => {
    expect(decodeClientForTest(encodeNamesRequest([3, 70_001, 0xfffe_0003])).ids).toEqual([3, 70_001, 0xfffe_0003]);
    const many = Array.from({ length: MAX_NAMES_REQUEST_IDS + 10 }, (_, i) => i + 1);
    const ids = decodeClientForTest(encodeNamesRequest(many)).ids;
    expect(ids).toEqual(many.slice(0, MAX_NAMES_REQUEST_IDS));
    expect(MAX_NAMES_REQUEST_IDS).toBe(Limit.MaxNamesRequestIds);
  });
});
