// Reads back the client messages this page encodes, for unit tests only (the
// server decodes them for real, in Rust). Trusts its input: never use it on
// network data.

import * as flatbuffers from 'flatbuffers';
import { ChatSend, ClientBody, ClientMessage, Hello, Input, NamesRequest, Ping } from '../generated/mino/wire.js';

/** A decoded client message, flattened for assertions. */
export interface ClientForTest {
  kind: 'hello' | 'input' | 'chat' | 'ping' | 'names' | 'none';
  seq: number;
  x: number;
  y: number;
  text: string;
  name: string;
  version: number;
  ticket: Uint8Array | null;
  /** A Hello's access token (null: none). */
  token: string | null;
  /** A Hello's capabilities (bits of the schema's Capability). */
  capabilities: number;
  clientTimeMs: number;
  /** A NamesRequest's ids. */
  ids: number[];
}

/** Decodes one message produced by protocol.ts's encoders. */
export function decodeClientForTest(bytes: Uint8Array): ClientForTest {
  const out: ClientForTest = { kind: 'none', seq: 0, x: 0, y: 0, text: '', name: '', version: 0, ticket: null, token: null, capabilities: 0, clientTimeMs: 0, ids: [] };
  const m = ClientMessage.getRootAsClientMessage(new flatbuffers.ByteBuffer(bytes));
  switch (m.bodyType()) {
    case ClientBody.Input: {
      const i = m.body(new Input()) as Input;
      return { ...out, kind: 'input', seq: i.seq(), x: i.dirX(), y: i.dirY() };
    }
    case ClientBody.ChatSend:
      return { ...out, kind: 'chat', text: (m.body(new ChatSend()) as ChatSend).text() ?? '' };
    case ClientBody.Hello: {
      const h = m.body(new Hello()) as Hello;
      return { ...out, kind: 'hello', name: h.name() ?? '', version: h.protocolVersion(), ticket: h.resumeTicketArray(), token: h.accessToken(), capabilities: h.capabilities() };
    }
    case ClientBody.Ping:
      return { ...out, kind: 'ping', clientTimeMs: (m.body(new Ping()) as Ping).clientTimeMs() };
    case ClientBody.NamesRequest: {
      const r = m.body(new NamesRequest()) as NamesRequest;
      return { ...out, kind: 'names', ids: Array.from({ length: r.idsLength() }, (_, i) => r.ids(i) ?? 0) };
    }
    default:
      return out;
  }
}
