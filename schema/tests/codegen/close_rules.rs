//! The close codes a client must not simply retry, written as TypeScript from
//! flatc's binary reflection schema: every value of `CloseCode` that carries
//! the schema's `reconnect` attribute, with its rule, so the page's close
//! policy (`client-web/src/net/policy.ts`) is tested against the schema and a
//! new "do not reconnect" code cannot be forgotten.
//!
//! Output: `client-web/src/generated/mino/close-rules.ts`, the map
//! `CLOSE_RULES` (close code -> `'never' | 'without_token'`) in the schema's
//! order. A `reconnect` value other than those two, or the attribute without
//! a value, stops the generation with the code's name.

use std::fmt::Write as _;

use anyhow::{bail, Context as _, Result};
use flatbuffers_reflection::reflection::root_as_schema;

/// The enum whose values carry the rules.
const ENUM: &str = "mino.wire.CloseCode";
/// The attribute, and the rules it may name.
const ATTRIBUTE: &str = "reconnect";
const RULES: [&str; 2] = ["never", "without_token"];

const HEAD: &str = "\
// automatically generated from schema/mino.fbs by schema/tests/codegen.rs
// (flatc's reflection schema); do not modify. Regenerate: README.md, \"Protocol\".
//
// The close codes the schema marks with `reconnect`: after \"never\" a client
// does not reconnect on its own; after \"without_token\" it does not send the
// same access token again.

import { CloseCode } from './wire/close-code.js';

/** What a client must not do after a close (or an Error) with a marked code. */
export type ReconnectRule = 'never' | 'without_token';

/** Every close code the schema marks, with its rule, in the schema's order. */
export const CLOSE_RULES: ReadonlyMap<CloseCode, ReconnectRule> = new Map<CloseCode, ReconnectRule>([
";

/// Generates `close-rules.ts` from a binary reflection schema (`.bfbs`).
///
/// Errors: the buffer is not a reflection schema, it has no `CloseCode`
/// enum, or a value's `reconnect` rule is missing or unknown.
pub fn generate(bfbs: &[u8]) -> Result<String> {
    let schema = root_as_schema(bfbs).context("not a reflection schema (.bfbs)")?;
    let close = schema.enums().iter().find(|e| e.name() == ENUM).with_context(|| format!("no enum {ENUM}"))?;
    let mut out = String::from(HEAD);
    let mut values: Vec<_> = close.values().iter().collect();
    values.sort_by_key(|v| v.value());
    for v in values {
        let Some(rule) = v.attributes().and_then(|a| a.iter().find(|kv| kv.key() == ATTRIBUTE)) else { continue };
        let rule = rule.value().unwrap_or_default();
        if !RULES.contains(&rule) {
            bail!("CloseCode.{}: {ATTRIBUTE} {rule:?} is none of {RULES:?}", v.name());
        }
        let _ = writeln!(out, "  [CloseCode.{}, '{rule}'],", v.name());
    }
    out.push_str("]);\n");
    Ok(out)
}
