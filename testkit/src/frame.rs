//! What a test player receives, as owned values a test can match on: every
//! server message (verified and decoded by loadgen's decoder,
//! [`mino_loadgen::ServerEvent`]) with plain ids and positions, and the end of
//! the websocket. View frames apply to what the player holds
//! ([`mino_protocol::held::Held`], see [`crate::player::Player`]); each cell
//! they change comes as a [`Frame::Cell`], or without area of interest
//! (the whole place one cell) as a [`Frame::Snapshot`] of its shard.

use mino_loadgen::event::{CellFrame, PlayerPos};
use mino_loadgen::{ServerEvent, SnapshotFrame, Welcomed};
use mino_protocol::held::{Held, Update};
use mino_protocol::view::tick_time_ms;
use mino_protocol::wire;

/// What a Welcome told the player.
#[derive(Clone, Debug)]
pub struct Welcome {
    /// True when this resumed an earlier session.
    pub resumed: bool,
    /// The player's id.
    pub player_id: u32,
    /// The shard that simulates the player.
    pub shard_id: u32,
    /// Snapshot rate, Hz.
    pub tick_hz: u16,
    /// Walking speed, world units per second.
    pub speed: f32,
    /// World bounds, world units.
    pub bounds: wire::Bounds,
    /// Position, world units.
    pub x: f32,
    /// Position, world units.
    pub y: f32,
    /// The resume ticket (secret).
    pub ticket: Vec<u8>,
    /// Server wall clock at the Welcome, ms since the Unix epoch.
    pub server_time_ms: u64,
    /// Area of interest: cell side, world units (0: none, the whole place is
    /// one cell).
    pub cell_size: f32,
    /// Area of interest: view radius, world units.
    pub view_radius: f32,
    /// Area of interest: how long an unseen player stays drawn, ms.
    pub view_grace_ms: u32,
    /// A held cell sent nothing for this long is dropped, ms (0: never).
    pub cell_expiry_ms: u32,
}

/// One thing a test player received.
#[derive(Clone, Debug)]
pub enum Frame {
    /// Admitted.
    Welcome(Welcome),
    /// One shard's players at one tick: (id, x, y) in world units.
    Snapshot {
        /// The shard.
        shard: u32,
        /// Its tick.
        tick: u64,
        /// Its wall clock at the tick, ms since the Unix epoch.
        time_ms: u64,
        /// Every player: id and position.
        players: Vec<(u32, f32, f32)>,
        /// Every player's whole entry (heading, moving, the input echo), in
        /// the order of `players`.
        entries: Vec<PlayerPos>,
    },
    /// A chat line.
    Chat {
        /// Sender's id.
        from: u32,
        /// Sender's name.
        name: String,
        /// The line.
        text: String,
        /// Sender's shard.
        shard: u32,
    },
    /// Players that joined (id, name) and left on one shard.
    Presence {
        /// Joined players.
        joined: Vec<(u32, String)>,
        /// Players that left.
        left: Vec<u32>,
    },
    /// Every present player (id, name).
    Roster(Vec<(u32, String)>),
    /// One shard's players of one cell at one tick (area of interest: one
    /// cell of a view frame, see [`Frame::decode_all`]); the Welcome's bounds
    /// turn its entries into positions.
    Cell(CellFrame<'static>),
    /// A cell left the view: the player holds it no more.
    Forgot {
        /// Whose cell.
        shard: u32,
        /// The cell.
        cell: u32,
        /// The section's tick (low 32 bits).
        tick: u32,
    },
    /// Every cell of a shard was dropped (a resync, or the shard left).
    Reset {
        /// The shard.
        shard: u32,
        /// The section's tick (low 32 bits).
        tick: u32,
    },
    /// A view frame with no full form in it, read holding nothing
    /// ([`Frame::decode`]): its deltas need what a player holds.
    Deltas,
    /// Names a NamesRequest asked for (id, name).
    Names(Vec<(u32, String)>),
    /// Players and live shards of the place (area of interest).
    PlaceStatus {
        /// Players in the place.
        players: u32,
        /// Live shards.
        shards: u32,
    },
    /// Refused for now.
    Busy {
        /// Why.
        reason: String,
        /// Retry after, ms.
        retry_after_ms: u32,
    },
    /// The close code the server is about to close with, and why (text).
    Error(u16, String),
    /// Answer to a Ping: the Ping's client time, ms.
    Pong(f64),
    /// Drain: the fresh resume ticket to present elsewhere.
    Move(Vec<u8>),
    /// The websocket closed with this code (None: no close frame).
    Closed(Option<u16>),
}

impl Frame {
    /// Verifies and decodes one binary message from the server, holding
    /// nothing: a view frame gives its first cell (see [`Frame::decode_all`]).
    ///
    /// Panics: the bytes fail verification (the server must never send such).
    pub fn decode(bytes: &[u8]) -> Frame {
        Frame::decode_all(bytes).into_iter().next().unwrap_or(Frame::Deltas)
    }

    /// Verifies and decodes one binary message from the server, holding
    /// nothing before it: one frame, or a view frame's full forms, each a
    /// [`Frame::Cell`] (times unknown: 0), in order; its deltas and forgets
    /// are passed over (they need what a player holds: read through
    /// [`crate::player::Player`]).
    ///
    /// Panics: the bytes fail verification.
    pub fn decode_all(bytes: &[u8]) -> Vec<Frame> {
        match ServerEvent::decode(bytes).expect("server sent a valid frame") {
            ServerEvent::View(view) => full_forms(&view),
            other => vec![Frame::from(other)],
        }
    }

    /// Verifies and decodes one binary message, a view frame applied to
    /// `held`: each cell it changed a [`Frame::Cell`], or with `whole` (the
    /// Welcome of a place without area of interest) each shard it changed a
    /// [`Frame::Snapshot`] of every player held of that shard. `now_ms` is
    /// when it arrived (ms on the player's clock), for cells that expire
    /// ([`Held::apply_at`]: each expired cell a [`Frame::Forgot`] first).
    ///
    /// Panics: the bytes fail verification, or an item does not apply.
    pub fn read(bytes: &[u8], held: &mut Held, whole: Option<&Welcome>, now_ms: u64) -> Vec<Frame> {
        let view = match ServerEvent::decode(bytes).expect("server sent a valid frame") {
            ServerEvent::View(view) => view,
            other => return vec![Frame::from(other)],
        };
        let frame = view.frame().expect("verified");
        let mut updates = Vec::new();
        held.apply_at(&frame, now_ms, &mut updates).expect("every item applies to what the player holds");
        let (hz, near) = whole.map_or((20, 0), |w| (w.tick_hz, w.server_time_ms));
        let mut out = Vec::new();
        for update in updates {
            let (shard, cell, tick) = match update {
                Update::Cell { shard, cell, tick } => (shard, cell, tick),
                Update::Forgot { shard, cell, tick } => {
                    out.push(Frame::Forgot { shard, cell, tick });
                    continue;
                }
                Update::Reset { shard, tick } => {
                    out.push(Frame::Reset { shard, tick });
                    continue;
                }
                // A lossy client's cell left as it was (`Delivery::Lossy`):
                // nothing it holds changed.
                Update::Broken { .. } => continue,
            };
            let time_ms = if near == 0 { 0 } else { tick_time_ms(tick, hz, near) };
            match whole.filter(|w| w.cell_size == 0.0) {
                Some(w) => {
                    if matches!(out.last(), Some(Frame::Snapshot { shard: s, .. }) if *s == shard) {
                        continue;
                    }
                    let mut entries: Vec<PlayerPos> = Vec::new();
                    for (_, c) in held.cells().filter(|((s, _), _)| *s == shard) {
                        entries.extend(c.entries.iter().map(|e| PlayerPos::of(&e.to_wire(), &w.bounds)));
                    }
                    entries.sort_unstable_by_key(|p| p.id.0);
                    let players = entries.iter().map(|p| (p.id.0, p.x, p.y)).collect();
                    let tick = mino_protocol::view::unwrap_tick(tick, near * u64::from(hz) / 1000);
                    out.push(Frame::Snapshot { shard, tick, time_ms, players, entries });
                }
                None => {
                    let entries = held.cell(shard, cell).map_or(&[][..], |c| c.entries);
                    out.push(Frame::Cell(CellFrame::held(shard, cell, tick, time_ms, entries).into_owned()));
                }
            }
        }
        out
    }
}

impl From<ServerEvent> for Frame {
    fn from(event: ServerEvent) -> Frame {
        match event {
            ServerEvent::Welcome(w) => Frame::Welcome(Welcome::from(w)),
            ServerEvent::Snapshot(s) => snapshot(s),
            ServerEvent::Chat { from, name, text, shard_id } => {
                Frame::Chat { from: from.0, name, text, shard: shard_id.0 }
            }
            ServerEvent::Presence { joined, left, .. } => {
                Frame::Presence { joined: named(joined), left: left.into_iter().map(|p| p.0).collect() }
            }
            ServerEvent::Roster(players) => Frame::Roster(named(players)),
            ServerEvent::Busy { reason, retry_after_ms } => Frame::Busy { reason, retry_after_ms },
            ServerEvent::Error { code, message } => Frame::Error(code, message),
            ServerEvent::Pong { client_time_ms, .. } => Frame::Pong(client_time_ms),
            ServerEvent::Move { ticket, .. } => Frame::Move(ticket),
            ServerEvent::View(view) => full_forms(&view).into_iter().next().unwrap_or(Frame::Deltas),
            ServerEvent::Names(players) => Frame::Names(named(players)),
            ServerEvent::PlaceStatus { players, shards } => Frame::PlaceStatus { players, shards },
        }
    }
}

impl Welcome {
    /// The players of a cell, dequantized over the world's bounds:
    /// (id, x, y) in world units.
    pub fn players(&self, cell: &CellFrame) -> Vec<(u32, f32, f32)> {
        cell.players(&self.bounds).iter().map(|p| (p.id.0, p.x, p.y)).collect()
    }

    /// The whole entries of a cell's players, dequantized over the world's
    /// bounds.
    pub fn cell_entries(&self, cell: &CellFrame) -> Vec<PlayerPos> {
        cell.players(&self.bounds)
    }

    /// A cell's time (the low 32 bits of its ms) as full ms since the
    /// Unix epoch, the one nearest the Welcome's time.
    pub fn unwrap_time(&self, low: u32) -> u64 {
        let base = self.server_time_ms & !0xffff_ffff;
        [base.wrapping_sub(1 << 32), base, base + (1 << 32)]
            .into_iter()
            .map(|high| high | u64::from(low))
            .min_by_key(|t| t.abs_diff(self.server_time_ms))
            .unwrap_or(u64::from(low))
    }
}

impl From<Welcomed> for Welcome {
    fn from(w: Welcomed) -> Welcome {
        Welcome {
            resumed: w.resumed,
            player_id: w.player_id.0,
            shard_id: w.shard_id.0,
            tick_hz: w.tick_hz,
            speed: w.speed,
            bounds: w.bounds,
            x: w.position.0,
            y: w.position.1,
            ticket: w.ticket,
            server_time_ms: w.server_time_ms,
            cell_size: w.cell_size,
            view_radius: w.view_radius,
            view_grace_ms: w.view_grace_ms,
            cell_expiry_ms: w.cell_expiry_ms,
        }
    }
}

/// The cells of a view frame's full forms, in order (its deltas and
/// forgets passed over).
fn full_forms(view: &mino_loadgen::event::ViewBytes) -> Vec<Frame> {
    let Ok(frame) = view.frame() else { return Vec::new() };
    let mut out = Vec::new();
    let mut entries = Vec::new();
    for section in frame.sections() {
        for cell in section.cells() {
            for item in cell.items().filter(|i| i.kind == mino_protocol::view::ItemKind::Full) {
                if mino_protocol::delta::decode_full(item.body, usize::MAX, &mut entries).is_ok() {
                    out.push(Frame::Cell(
                        CellFrame::held(section.shard, cell.cell, section.tick, 0, &entries).into_owned(),
                    ));
                }
            }
        }
    }
    out
}

fn snapshot(s: SnapshotFrame) -> Frame {
    Frame::Snapshot {
        shard: s.shard_id.0,
        tick: s.tick.0,
        time_ms: s.server_time_ms,
        players: s.players.iter().map(|p| (p.id.0, p.x, p.y)).collect(),
        entries: s.players,
    }
}

fn named(players: Vec<(mino_protocol::PlayerId, String)>) -> Vec<(u32, String)> {
    players.into_iter().map(|(id, name)| (id.0, name)).collect()
}

/// The websocket close code of `c`, as [`crate::Player::closed`] reports it.
pub fn close_code(c: wire::CloseCode) -> Option<u16> {
    Some(c.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::server;

    #[test]
    fn messages_become_frames() {
        assert!(matches!(
            Frame::decode(&server::encode_busy("full", 700)),
            Frame::Busy { reason, retry_after_ms: 700 } if reason == "full"
        ));
        assert!(matches!(Frame::decode(&server::encode_move(&[1, 2], "drain")), Frame::Move(t) if t == [1, 2]));
        let error = server::encode_error(wire::CloseCode::TicketUsed, "used");
        assert!(matches!(Frame::decode(&error), Frame::Error(4015, _)));
        assert_eq!(close_code(wire::CloseCode::Moved), Some(wire::CloseCode::Moved.0));
    }
}
