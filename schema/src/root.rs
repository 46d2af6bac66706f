//! Finishing a `ServerMessage`: the root every server message shares, with
//! its body (a view frame builds its own root; see [`crate::cell`]).

use crate::wire;
use bytes::Bytes;
use flatbuffers::{FlatBufferBuilder, UnionWIPOffset, WIPOffset};

/// Wraps `body` of type `kind` in a `ServerMessage`, finishes the buffer and
/// copies it out.
pub(crate) fn finish(
    fbb: &mut FlatBufferBuilder<'_>,
    kind: wire::ServerBody,
    body: WIPOffset<UnionWIPOffset>,
) -> Bytes {
    let root = wire::ServerMessage::create(
        fbb,
        &wire::ServerMessageArgs { body_type: kind, body: Some(body), ..Default::default() },
    );
    fbb.finish(root, None);
    Bytes::copy_from_slice(fbb.finished_data())
}
