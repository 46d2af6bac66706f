//! View frames as datagrams. A view frame that fits the connection's
//! current datagram limit goes as it is, one datagram; a larger one is cut
//! between sections and cells into several view frames, each a whole
//! `ServerMessage` a client decodes and applies alone (so one lost costs
//! only its cells, for one tick). A cell is never cut: one whose items
//! alone exceed the limit goes on the session's reliable stream instead, in
//! a view frame of its own, and is counted (a place without area of
//! interest is one cell, over a datagram past about 150 players: its players
//! then see the place as a websocket's would, with a lost packet delaying
//! it, rather than not at all).
//!
//! Any cut between cells is valid: a session is served full forms, each
//! standing alone, or deltas whose every cell's items stand alone too (an
//! unchanged item before a delta, every supplement, no walker handed off
//! between cells, no implied cell: `ARCHITECTURE.md`, "WebTransport"), and
//! its client checks each delta's base, so datagrams may arrive in any
//! order or not at all.

use bytes::Bytes;
use mino_protocol::server::{self, ServerMsg};
use mino_protocol::view::{encode_view, section_bytes_at_most, write_section, Section, VIEW_ENVELOPE_BYTES};

/// What cutting one view frame came to.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Cut {
    /// Datagrams, each a whole view frame message within the limit.
    pub datagrams: Vec<Bytes>,
    /// The cells each alone over the limit, as one view frame message for
    /// the reliable stream (none when every cell fits a datagram).
    pub stream: Option<Bytes>,
    /// How many cells went to `stream`.
    pub too_big: usize,
}

/// Cuts `message` (a view frame `ServerMessage`, as the shard core built
/// it) into datagrams of at most `max` bytes each.
pub fn cut(message: &Bytes, max: usize) -> Cut {
    if message.len() <= max {
        return Cut { datagrams: vec![message.clone()], stream: None, too_big: 0 };
    }
    let Ok(ServerMsg::View(frame)) = server::decode(message) else {
        // Not a view frame (the core makes none such): the stream takes it whole.
        return Cut { datagrams: Vec::new(), stream: Some(message.clone()), too_big: 1 };
    };
    let room = max.saturating_sub(VIEW_ENVELOPE_BYTES);
    let mut out = Cut::default();
    let (mut sections, mut stream) = (Vec::new(), Vec::new());
    for section in frame.sections() {
        // Datagram views never imply a cell (protocol 7):
        // a cut rewrites a section from its told cells alone.
        debug_assert!(section.implied.is_none(), "a datagram view's section implies cells");
        let (shard, tick) = (section.shard, u64::from(section.tick));
        let mut cells: Vec<(u32, Vec<&[u8]>)> = Vec::new();
        let mut over: Vec<(u32, Vec<&[u8]>)> = Vec::new();
        let mut item_bytes = 0;
        if section.is_empty() {
            // A reset: a section with no cells.
            let mut reset = Vec::new();
            write_section(&mut reset, &Section { shard, tick, cells: &cells });
            if sections.len() + reset.len() > room {
                flush(&mut sections, &mut out);
            }
            sections.extend_from_slice(&reset);
            continue;
        }
        for cell in section.cells() {
            let items: Vec<&[u8]> = cell.items().map(|i| i.bytes).collect();
            let size: usize = items.iter().map(|i| i.len()).sum();
            if sections.len() + section_bytes_at_most(cells.len() + 1, item_bytes + size) > room {
                if !cells.is_empty() {
                    write_section(&mut sections, &Section { shard, tick, cells: &cells });
                    cells.clear();
                    item_bytes = 0;
                }
                flush(&mut sections, &mut out);
                if section_bytes_at_most(1, size) > room {
                    out.too_big += 1;
                    over.push((cell.cell, items));
                    continue;
                }
            }
            cells.push((cell.cell, items));
            item_bytes += size;
        }
        if !cells.is_empty() {
            write_section(&mut sections, &Section { shard, tick, cells: &cells });
        }
        if !over.is_empty() {
            write_section(&mut stream, &Section { shard, tick, cells: &over });
        }
    }
    flush(&mut sections, &mut out);
    if out.datagrams.is_empty() && out.too_big > 0 {
        // Nothing fitted (a place without area of interest: one cell): the
        // frame as the core built it, shared by every such session, not a
        // copy a session a tick.
        out.stream = Some(message.clone());
    } else if !stream.is_empty() {
        out.stream = Some(Bytes::from(encode_view(&stream)));
    }
    out
}

/// Ends the datagram being filled, if it has anything.
fn flush(sections: &mut Vec<u8>, out: &mut Cut) {
    if !sections.is_empty() {
        out.datagrams.push(Bytes::from(encode_view(sections)));
        sections.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::delta::encode_full;
    use mino_protocol::entry::Entry;
    use mino_protocol::view::{write_item, ItemKind};
    use mino_protocol::PlayerId;

    /// A full form item of `players` players.
    fn full(first: u32, players: u32) -> Vec<u8> {
        let entries: Vec<Entry> = (first..first + players)
            .map(|i| Entry { id: PlayerId(i), x: i as u16 * 7, y: i as u16 * 3, heading: 0, flags: 0 })
            .collect();
        let (mut body, mut item) = (Vec::new(), Vec::new());
        encode_full(&entries, &mut body);
        write_item(&mut item, ItemKind::Full, &body);
        item
    }

    /// A view frame of two shards' sections: `cells` cells of `players`
    /// players each, and a reset.
    fn frame(cells: u32, players: u32) -> Bytes {
        let items: Vec<Vec<u8>> = (0..cells).map(|c| full(c * 100 + 1, players)).collect();
        let list: Vec<(u32, Vec<&[u8]>)> =
            items.iter().enumerate().map(|(c, i)| (c as u32 * 3 + 1, vec![&i[..]])).collect();
        let mut sections = Vec::new();
        write_section(&mut sections, &Section { shard: 9, tick: 1000, cells: &list });
        write_section(&mut sections, &Section::<(u32, Vec<&[u8]>)> { shard: 4, tick: 999, cells: &[] });
        write_section(&mut sections, &Section { shard: 5, tick: 998, cells: &list[..2] });
        Bytes::from(encode_view(&sections))
    }

    /// Every (shard, tick, cell, items) a datagram holds, and its resets.
    fn contents(datagrams: &[Bytes]) -> Vec<(u32, u32, u32, Vec<Vec<u8>>)> {
        let mut all = Vec::new();
        for d in datagrams {
            let Ok(ServerMsg::View(f)) = server::decode(d) else { panic!("a view frame") };
            for s in f.sections() {
                if s.is_empty() {
                    all.push((s.shard, s.tick, 0, Vec::new()));
                }
                for c in s.cells() {
                    all.push((s.shard, s.tick, c.cell, c.items().map(|i| i.bytes.to_vec()).collect()));
                }
            }
        }
        all.sort();
        all
    }

    #[test]
    fn a_frame_that_fits_goes_whole() {
        let f = frame(3, 2);
        let cut = cut(&f, 1200);
        assert_eq!(cut, Cut { datagrams: vec![f], stream: None, too_big: 0 });
    }

    #[test]
    fn a_large_frame_is_cut_between_cells_into_frames_that_stand_alone() {
        let f = frame(40, 20);
        assert!(f.len() > 3000, "the frame is {} bytes", f.len());
        for max in [300, 700, 1200] {
            let c = cut(&f, max);
            assert_eq!((c.too_big, &c.stream), (0, &None));
            assert!(c.datagrams.len() > 1);
            assert!(c.datagrams.iter().all(|d| d.len() <= max), "every datagram within {max}");
            assert_eq!(contents(&c.datagrams), contents(std::slice::from_ref(&f)), "every cell and reset, once");
        }
    }

    #[test]
    fn a_cell_over_the_limit_goes_on_the_stream_and_the_others_as_datagrams() {
        let f = frame(5, 40);
        let c = cut(&f, 200);
        assert_eq!(c.too_big, 7, "each cell alone is over 200 bytes");
        assert_eq!(contents(&c.datagrams), vec![(4, 999, 0, Vec::new())], "the reset still goes");
        let stream = c.stream.expect("the cells over the limit, for the stream");
        let mut all = contents(&c.datagrams);
        all.extend(contents(std::slice::from_ref(&stream)));
        all.sort();
        assert_eq!(all, contents(std::slice::from_ref(&f)), "every cell once, by datagram or by the stream");
        // Some fit, some do not: 3 cells of 2 players, 2 of 40.
        let mixed = {
            let items: Vec<Vec<u8>> =
                [2, 40, 2, 40, 2].iter().enumerate().map(|(c, n)| full(c as u32 * 100 + 1, *n)).collect();
            let list: Vec<(u32, Vec<&[u8]>)> =
                items.iter().enumerate().map(|(c, i)| (c as u32 + 1, vec![&i[..]])).collect();
            let mut sections = Vec::new();
            write_section(&mut sections, &Section { shard: 9, tick: 7, cells: &list });
            Bytes::from(encode_view(&sections))
        };
        let c = cut(&mixed, 200);
        assert_eq!(c.too_big, 2);
        let on_stream: Vec<u32> = contents(&[c.stream.expect("two cells")]).iter().map(|x| x.2).collect();
        assert_eq!(on_stream, [2, 4]);
        assert!(c.datagrams.iter().all(|d| d.len() <= 200));
        // Nothing fits: the frame itself goes, the same bytes for every session.
        let one = {
            let item = full(1, 40);
            let list: Vec<(u32, Vec<&[u8]>)> = vec![(0, vec![&item[..]])];
            let mut sections = Vec::new();
            write_section(&mut sections, &Section { shard: 9, tick: 7, cells: &list });
            Bytes::from(encode_view(&sections))
        };
        let c = cut(&one, 200);
        assert_eq!((c.too_big, c.datagrams.len()), (1, 0));
        let stream = c.stream.expect("the frame");
        assert_eq!(stream.as_ptr(), one.as_ptr(), "the frame's own bytes, not a copy");
    }
}
