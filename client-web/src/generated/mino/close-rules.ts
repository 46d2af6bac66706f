// automatically generated from schema/mino.fbs by schema/tests/codegen.rs
// (flatc's reflection schema); do not modify. Regenerate: README.md, "Protocol".
//
// The close codes the schema marks with `reconnect`: after "never" a client
// does not reconnect on its own; after "without_token" it does not send the
// same access token again.

import { CloseCode } from './wire/close-code.js';

/** What a client must not do after a close (or an Error) with a marked code. */
export type ReconnectRule = 'never' | 'without_token';

/** Every close code the schema marks, with its rule, in the schema's order. */
export const CLOSE_RULES: ReadonlyMap<CloseCode, ReconnectRule> = new Map<CloseCode, ReconnectRule>([
  [CloseCode.ProtocolVersion, 'never'],
  [CloseCode.NameInvalid, 'never'],
  [CloseCode.SessionReplaced, 'never'],
  [CloseCode.AuthRequired, 'without_token'],
  [CloseCode.AuthExpired, 'without_token'],
  [CloseCode.AuthNotYetValid, 'without_token'],
  [CloseCode.AuthBadSignature, 'without_token'],
  [CloseCode.AuthWrongIssuer, 'without_token'],
  [CloseCode.AuthWrongAudience, 'without_token'],
  [CloseCode.AuthMalformed, 'without_token'],
  [CloseCode.Kicked, 'never'],
]);
