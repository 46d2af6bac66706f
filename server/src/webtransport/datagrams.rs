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
//! between cells: `ARCHITECTURE.md`, "WebTransport"), and its client checks
//! each delta's base, so datagrams may arrive in any order or not at all.
//! A section's implied cells (protocol 7: each an empty delta alone, said
//! by a bit over its view's cells) stand alone as well: the cut keeps the
//! block whole, with the section's first part, its view named there (the
//! frame may have named it in an earlier section, now in another datagram).

use bytes::Bytes;
use mino_protocol::server::{self, ServerMsg};
use mino_protocol::view::{
    encode_view, implied_bytes, section_bytes_at_most, write_section, write_section_cell, write_section_header,
    write_section_header_implied, Implied, Section, VIEW_ENVELOPE_BYTES,
};

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
        let (shard, tick) = (section.shard, u64::from(section.tick));
        if section.is_empty() {
            // A reset: a section with no cells.
            let mut reset = Vec::new();
            write_section(&mut reset, &Section::<(u32, Vec<&[u8]>)> { shard, tick, cells: &[] });
            if sections.len() + reset.len() > room {
                flush(&mut sections, &mut out);
            }
            sections.extend_from_slice(&reset);
            continue;
        }
        // The implied block, until a part of the section has taken it.
        let mut implied = section.implied;
        let block_bytes = |implied: &Option<Implied<'_>>| implied.as_ref().map_or(0, |b| implied_bytes(b, true));
        // A block over a datagram alone (a view of thousands of candidate
        // cells) goes on the stream, with the cells over the limit, and is
        // counted as one of them.
        let mut on_stream = None;
        if section_bytes_at_most(0, 0) + block_bytes(&implied) > room {
            on_stream = implied.take();
            out.too_big += 1;
        }
        let mut cells: Vec<(u32, Vec<&[u8]>)> = Vec::new();
        let mut over: Vec<(u32, Vec<&[u8]>)> = Vec::new();
        let mut item_bytes = 0;
        for cell in section.cells() {
            let items: Vec<&[u8]> = cell.items().map(|i| i.bytes).collect();
            let size: usize = items.iter().map(|i| i.len()).sum();
            let part = |cells: usize, bytes: usize, implied: &Option<Implied<'_>>| {
                section_bytes_at_most(cells, bytes) + block_bytes(implied)
            };
            if sections.len() + part(cells.len() + 1, item_bytes + size, &implied) > room {
                if !cells.is_empty() {
                    write_part(&mut sections, (shard, tick), &cells, &mut implied);
                    cells.clear();
                    item_bytes = 0;
                }
                flush(&mut sections, &mut out);
                if implied.is_some() && part(1, size, &implied) > room {
                    // The block and this cell fill more than a datagram:
                    // the block goes in one of its own.
                    write_part(&mut sections, (shard, tick), &[], &mut implied);
                    flush(&mut sections, &mut out);
                }
                if part(1, size, &implied) > room {
                    out.too_big += 1;
                    over.push((cell.cell, items));
                    continue;
                }
            }
            cells.push((cell.cell, items));
            item_bytes += size;
        }
        if !cells.is_empty() || implied.is_some() {
            if sections.len() + section_bytes_at_most(cells.len(), item_bytes) + block_bytes(&implied) > room {
                flush(&mut sections, &mut out);
            }
            write_part(&mut sections, (shard, tick), &cells, &mut implied);
        }
        if !over.is_empty() || on_stream.is_some() {
            write_part(&mut stream, (shard, tick), &over, &mut on_stream);
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

/// Appends a part of a section of `shard` at `tick`: `cells`, with the
/// section's implied block when no part has taken it yet (`implied`, then
/// `None`), its view named.
fn write_part(
    out: &mut Vec<u8>,
    (shard, tick): (u32, u64),
    cells: &[(u32, Vec<&[u8]>)],
    implied: &mut Option<Implied<'_>>,
) {
    match implied.take() {
        Some(block) => write_section_header_implied(out, shard, tick, cells.len(), &block, true),
        None => write_section_header(out, shard, tick, cells.len()),
    }
    let mut previous = 0;
    for (cell, items) in cells {
        write_section_cell(out, previous, *cell, items);
        previous = *cell;
    }
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
    use mino_protocol::view::{write_item, ItemKind, SectionView};
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

    /// Each section's implied block, as read (its view resolved), with
    /// its shard and tick, from every datagram.
    fn blocks(datagrams: &[Bytes]) -> Vec<(u32, u32, SectionView, u8, usize, Vec<u8>)> {
        let mut all = Vec::new();
        for d in datagrams {
            let Ok(ServerMsg::View(f)) = server::decode(d) else { panic!("a view frame") };
            for s in f.sections() {
                if let Some(b) = s.implied {
                    all.push((s.shard, s.tick, b.view, b.due, b.count, b.bits.to_vec()));
                }
            }
        }
        all.sort_by_key(|b| (b.0, b.1));
        all
    }

    #[test]
    fn a_sections_implied_cells_go_once_whole_and_named_wherever_the_cut_falls() {
        // Shard 9's section implies cells of a view it names; shard 5's
        // implies cells of the same view, named by shard 9's (a cut may
        // put them in two datagrams); shard 4's implies cells and tells none.
        let view = SectionView { key: 57, previous: 56, rung: 2 };
        let (nine, five): (&'static [u8], &'static [u8]) = (&[0b1010_0101, 0b0000_0011], &[0b1]);
        let items: Vec<Vec<u8>> = (0..40).map(|c| full(c * 100 + 1, 20)).collect();
        let list: Vec<(u32, Vec<&[u8]>)> =
            items.iter().enumerate().map(|(c, i)| (c as u32 * 3 + 1, vec![&i[..]])).collect();
        let mut sections = Vec::new();
        let block = |bits: &'static [u8], count| Implied { view, due: 1, count, bits };
        write_section_header_implied(&mut sections, 9, 1000, list.len(), &block(nine, 10), true);
        let mut previous = 0;
        for (cell, items) in &list {
            write_section_cell(&mut sections, previous, *cell, items);
            previous = *cell;
        }
        write_section_header_implied(&mut sections, 5, 998, 2, &block(five, 3), false);
        write_section_cell(&mut sections, 0, 2, &list[0].1);
        write_section_cell(&mut sections, 2, 5, &list[1].1);
        write_section_header_implied(&mut sections, 4, 997, 0, &block(five, 1), false);
        let f = Bytes::from(encode_view(&sections));
        let want = blocks(std::slice::from_ref(&f));
        assert_eq!(want.len(), 3, "the frame as written has three blocks");
        for max in [300, 450, 700, 1200] {
            let c = cut(&f, max);
            assert_eq!((c.too_big, &c.stream), (0, &None));
            assert!(c.datagrams.len() > 1);
            assert!(c.datagrams.iter().all(|d| d.len() <= max), "every datagram within {max}");
            assert_eq!(contents(&c.datagrams), contents(std::slice::from_ref(&f)), "every cell once");
            assert_eq!(blocks(&c.datagrams), want, "each block once, its view named in its datagram");
        }
    }

    #[test]
    fn an_implied_block_over_a_datagram_alone_goes_on_the_stream_and_the_cells_as_datagrams() {
        // 9,800 candidates: 1,225 bytes of bits, over a 1,200-byte datagram.
        let view = SectionView { key: 4_000, previous: 0, rung: 0 };
        let bits = vec![0b0101_0101; 9_800 / 8];
        let items: Vec<Vec<u8>> = (0..3).map(|c| full(c * 100 + 1, 20)).collect();
        let list: Vec<(u32, Vec<&[u8]>)> =
            items.iter().enumerate().map(|(c, i)| (c as u32 + 1, vec![&i[..]])).collect();
        let mut sections = Vec::new();
        let block = Implied { view, due: 0, count: 9_800, bits: &bits };
        write_section_header_implied(&mut sections, 9, 1000, list.len(), &block, true);
        let mut previous = 0;
        for (cell, items) in &list {
            write_section_cell(&mut sections, previous, *cell, items);
            previous = *cell;
        }
        let f = Bytes::from(encode_view(&sections));
        let c = cut(&f, 1200);
        assert_eq!(c.too_big, 1, "the block, counted");
        assert!(c.datagrams.iter().all(|d| d.len() <= 1200));
        assert_eq!(blocks(&c.datagrams), [], "no datagram holds the block");
        let stream = c.stream.expect("the block, on the stream");
        assert_eq!(blocks(std::slice::from_ref(&stream)), blocks(std::slice::from_ref(&f)), "whole, named");
        assert_eq!(contents(&c.datagrams), contents(std::slice::from_ref(&f)), "every cell by datagram");
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
