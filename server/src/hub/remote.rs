//! Sessions whose I/O runs in a task of their own (WebTransport, see
//! `crate::webtransport`): the hub keeps their player as it keeps a
//! websocket's, sends its view frames as datagrams itself on the tick's
//! thread ([`Datagrams`]: the session's task is not woken for them), and
//! hands its task the stream's messages over a bounded queue instead of
//! writing a socket. What the session's peer says comes
//! back to the tick driver over one queue shared by every such session
//! ([`FromSession`]) and is read by the same rules as a websocket's
//! ([`super::conn::Player`]: budgets, input order, pings).
//!
//! Messages are plaintext (the websocket framing taken off the shared
//! frames, zero-copy): the session frames them for its own transport.

use super::conn::{Limits, Player};
use super::{Inbound, Welcome, HELD_MAX};
use crate::clock::Instant;
use crate::close::CloseReason;
use crate::metrics::{Metrics, Transport};
use crate::shard::{LinkId, TickFrame};
use crate::websocket::frame as ws_frame;
use bytes::Bytes;
use mino_protocol::server as msg;
use std::collections::HashMap;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

/// Capacity of the queue from every session task to the tick driver. A
/// session's task holds at most one message waiting for room in it (and
/// then reads no more of its stream, while it still writes the hub's); the
/// driver takes up to 256 a pass (`tick::SESSIONS_A_PASS`).
pub const FROM_SESSIONS_QUEUE: usize = 8192;

/// Most items waiting in one session's queue beyond its too-slow ticks
/// (replies to pings and names between two ticks).
const QUEUE_SLACK: usize = 16;

/// What the hub hands one session task, in order.
#[derive(Debug)]
pub enum ToSession {
    /// One tick's messages for the reliable stream, in order (events, the
    /// roster, the welcome and what was gathered before it), each a
    /// plaintext `ServerMessage`. (View frames do not come this way: the
    /// hub sends them as datagrams itself, [`Datagrams`].)
    Messages(Vec<Bytes>),
    /// One message on the reliable stream (a pong, names, a move).
    Message(Bytes),
    /// Close: write `first` (a Busy, a Move) if any, then the Error
    /// message of `reason` (if it tells the peer) with `text`, and close
    /// the session with the reason's code.
    Close {
        /// Why.
        reason: CloseReason,
        /// What the Error message says.
        text: Box<str>,
        /// A message before the Error.
        first: Option<Bytes>,
    },
}

/// What a session task tells the tick driver.
#[derive(Debug)]
pub enum FromSession {
    /// One message its peer sent on the reliable stream (a whole
    /// `ClientMessage`, not yet verified).
    Message(LinkId, Bytes),
    /// The session must close for this reason (its peer left, broke the
    /// stream's framing, or the connection failed).
    Closed(LinkId, CloseReason),
}

/// Where a session's view frames go: the hub sends them as datagrams on
/// the tick's thread, so a session's task wakes only for its stream (the
/// transport still encrypts and writes in its own tasks).
pub trait Datagrams: Send + Sync + std::fmt::Debug {
    /// Sends `view` (a plaintext view frame message), cut to the path's
    /// current datagram limit; what cannot go is counted, never queued
    /// here. Returns a view frame of the cells each alone over the limit,
    /// for the hub to queue on the session's stream.
    fn send_view(&self, view: &Bytes) -> Option<Bytes>;

    /// True once the session's task has written its first messages (the
    /// Welcome) to the stream: its first views wait for it.
    fn welcomed(&self) -> bool {
        true
    }
}

/// A session handed from its task to the hub: where its messages go.
#[derive(Debug)]
pub struct Handover {
    /// The session's queue (bounded).
    pub to: mpsc::Sender<ToSession>,
    /// Its datagrams.
    pub datagrams: Box<dyn Datagrams>,
}

/// The capacity of a session's queue: the ticks a websocket may stay
/// blocked before it is too slow, plus room for replies.
pub fn queue_capacity(limits: &Limits) -> usize {
    limits.slow.ticks as usize + QUEUE_SLACK
}

/// One admitted session.
#[derive(Debug)]
struct Remote {
    player: Player,
    to: mpsc::Sender<ToSession>,
    datagrams: Box<dyn Datagrams>,
    /// Until its welcome goes out: the welcome, when it goes at the latest,
    /// and what the ticks gathered meanwhile.
    held: Option<Box<HeldRemote>>,
    /// No roster sent yet: the first one a tick offers is taken.
    want_roster: bool,
    /// From its welcome's queueing until its task has written it and a
    /// whole tick has passed (see [`FirstViews`]): its first views, held
    /// back. The welcome goes by the session's task and its
    /// stream, the views straight to quinn from here, so views sent with it
    /// reached the client before it, and a client drops the view frames
    /// that come before its Welcome (the browser does, `earlyViews`): the
    /// cells of a standing place, sent whole once, were then missing until
    /// the view's refresh, 64 ticks on.
    first_views: Option<FirstViews>,
}

/// A session's first views, held until its task has written the welcome
/// and a whole tick has passed since (or [`FIRST_VIEWS_MAX_TICKS`]).
#[derive(Debug, Default)]
struct FirstViews {
    views: Vec<Bytes>,
    /// Ticks delivered since the welcome was queued.
    ticks: u32,
}

/// Longest a session's first views wait for its welcome to be written,
/// ticks (1 s at the default 20 Hz). They then go all the same: a task that
/// has not written its welcome by then is behind a slow or stuck peer, which
/// its write timeout (`--write-timeout-ms`, 2 s by default) closes if it
/// stays stuck; the views may then reach the client before its Welcome and
/// be dropped, costing it the standing cells until the view's refresh.
const FIRST_VIEWS_MAX_TICKS: u32 = 20;

#[derive(Debug)]
struct HeldRemote {
    welcome: Bytes,
    until: Instant,
    messages: Vec<Bytes>,
    views: Vec<Bytes>,
}

impl Remote {
    /// Queues one message for the session's stream, after its welcome: a
    /// session whose welcome is held (clustered, until it is stored) has
    /// its replies (a pong, names) gathered with the tick's messages, as a
    /// websocket's outbox gathers them, so none goes before the welcome.
    /// Errors: as [`offer`].
    fn queue(&mut self, message: Bytes) -> Result<(), CloseReason> {
        match self.held.as_mut() {
            Some(held) => {
                held.messages.push(message);
                Ok(())
            }
            None => offer(&self.to, ToSession::Message(message)),
        }
    }
}

/// Every admitted session of the hub that runs in a task of its own.
#[derive(Debug, Default)]
pub struct Remotes {
    by_link: HashMap<LinkId, Remote>,
}

/// The plaintext of a server frame the core made for websockets.
fn plain(frame: &Bytes) -> Bytes {
    frame.slice_ref(ws_frame::payload(frame))
}

impl Remotes {
    /// Takes an admitted session of `player`; its welcome (`message`,
    /// plaintext) goes out now or when released.
    pub fn join(&mut self, handed: Handover, player: Player, message: &[u8], welcome: Welcome, now: Instant) {
        let link = player.link;
        let welcome_bytes = Bytes::copy_from_slice(message);
        let mut remote = Remote {
            player,
            to: handed.to,
            datagrams: handed.datagrams,
            held: None,
            want_roster: true,
            first_views: None,
        };
        match welcome {
            Welcome::Now => {
                let _ = remote.to.try_send(ToSession::Message(welcome_bytes));
                remote.first_views = Some(FirstViews::default());
            }
            Welcome::Held => {
                remote.held = Some(Box::new(HeldRemote {
                    welcome: welcome_bytes,
                    until: now + HELD_MAX,
                    messages: Vec::new(),
                    views: Vec::new(),
                }));
            }
        }
        self.by_link.insert(link, remote);
    }

    /// True when `link` is a session of this table.
    pub fn has(&self, link: LinkId) -> bool {
        self.by_link.contains_key(&link)
    }

    /// The player behind `link` and its ticket.
    pub fn ticket(&self, link: LinkId) -> Option<(mino_protocol::PlayerId, crate::resume::Ticket)> {
        self.by_link.get(&link).map(|r| (r.player.id, r.player.ticket))
    }

    /// Writes the held welcome of `link`, then what was gathered.
    pub fn welcome(&mut self, link: LinkId, metrics: &Metrics, out: &mut Vec<Inbound>) {
        let Some(remote) = self.by_link.get_mut(&link) else { return };
        let Some(held) = remote.held.take() else { return };
        let HeldRemote { welcome, mut messages, views, .. } = *held;
        messages.insert(0, welcome);
        if let Err(reason) = offer(&remote.to, ToSession::Messages(messages)) {
            return self.close(link, reason, None, metrics, out);
        }
        remote.first_views = Some(FirstViews { views, ticks: 0 });
    }

    /// Welcomes every session held past its backstop.
    pub fn overdue(&mut self, now: Instant, metrics: &Metrics, out: &mut Vec<Inbound>) {
        let late: Vec<LinkId> = self
            .by_link
            .iter()
            .filter(|(_, r)| r.held.as_ref().is_some_and(|h| now >= h.until))
            .map(|(l, _)| *l)
            .collect();
        for link in late {
            tracing::warn!(link = link.0, "welcome held too long; sending it");
            self.welcome(link, metrics, out);
        }
    }

    /// Sends `frame` (a websocket frame of the core's) to `link`'s session.
    pub fn send(&mut self, link: LinkId, frame: &Bytes, metrics: &Metrics, out: &mut Vec<Inbound>) {
        let Some(remote) = self.by_link.get_mut(&link) else { return };
        if let Err(reason) = remote.queue(plain(frame)) {
            self.close(link, reason, None, metrics, out);
        }
    }

    /// One message the session's peer sent: read as a websocket player's
    /// (budgets, input order); a ping is answered on the stream at once.
    pub fn on_message(
        &mut self,
        link: LinkId,
        data: &[u8],
        limits: &Limits,
        now: Instant,
        metrics: &Metrics,
        out: &mut Vec<Inbound>,
    ) {
        let Some(remote) = self.by_link.get_mut(&link) else { return };
        let verdict = match remote.player.on_message(data, limits, now, out) {
            Err(reason) => Some(reason),
            Ok(None) => None,
            Ok(Some(pong)) => remote.queue(pong).err(),
        };
        if let Some(reason) = verdict {
            self.close(link, reason, None, metrics, out);
        }
    }

    /// Hands every session its part of the tick: its view's frames as
    /// datagrams, and to its task the events and the first roster it sees;
    /// a session whose queue is full is too slow, one whose task is gone
    /// leaves.
    pub fn deliver(&mut self, frame: &TickFrame, metrics: &Metrics, out: &mut Vec<Inbound>) {
        let mut slow = Vec::new();
        for (link, remote) in &mut self.by_link {
            let mut messages: Vec<Bytes> = frame.events.iter().map(plain).collect();
            if remote.want_roster {
                if let Some(roster) = &frame.roster {
                    messages.push(plain(roster));
                    remote.want_roster = false;
                }
            }
            let views = frame.view_frames(*link);
            if let Some(held) = remote.held.as_mut() {
                held.messages.extend(messages);
                held.views.extend(views.iter().map(plain));
                continue;
            }
            if remote.to.is_closed() {
                // Its task ended without a word (a panic).
                slow.push((*link, CloseReason::ClientClosed));
                continue;
            }
            let sent = match remote.first_views.take() {
                None => send_views(remote.datagrams.as_ref(), views.iter().map(plain)),
                // Held while the welcome is not written, and for the tick in
                // which it was: the views then follow it by a tick at least.
                Some(mut first)
                    if first.ticks < FIRST_VIEWS_MAX_TICKS && (first.ticks == 0 || !remote.datagrams.welcomed()) =>
                {
                    first.views.extend(views.iter().map(plain));
                    first.ticks += 1;
                    remote.first_views = Some(first);
                    Ok(Vec::new())
                }
                Some(first) => {
                    send_views(remote.datagrams.as_ref(), first.views.into_iter().chain(views.iter().map(plain)))
                }
            };
            match sent {
                Ok(stream) => messages.extend(stream),
                Err(reason) => {
                    slow.push((*link, reason));
                    continue;
                }
            }
            if messages.is_empty() {
                continue;
            }
            if let Err(reason) = offer(&remote.to, ToSession::Messages(messages)) {
                slow.push((*link, reason));
            }
        }
        for (link, reason) in slow {
            self.close(link, reason, None, metrics, out);
        }
    }

    /// The players whose tickets a sweep refreshes, as the hub's sweep
    /// picks them.
    pub fn players(&self) -> impl Iterator<Item = &Player> {
        self.by_link.values().map(|r| &r.player)
    }

    /// Closes `link`'s session: its player leaves (an [`Inbound::Left`]),
    /// the task is told to write `first`, the Error and close with `text`.
    pub fn close_saying(
        &mut self,
        link: LinkId,
        reason: CloseReason,
        first: Option<&Bytes>,
        text: &str,
        metrics: &Metrics,
        out: &mut Vec<Inbound>,
    ) {
        let Some(remote) = self.by_link.remove(&link) else { return };
        out.push(Inbound::Left { player: remote.player.id, link });
        metrics.closed(Transport::WebTransport, reason);
        tracing::debug!(player = %remote.player.id, reason = reason.label(), "webtransport session closed");
        // A full queue: the task finds it closed after what waits (and
        // closes as too slow).
        let _ = remote.to.try_send(ToSession::Close { reason, text: text.into(), first: first.map(plain) });
    }

    /// [`Remotes::close_saying`] with the reason's own message.
    pub fn close(
        &mut self,
        link: LinkId,
        reason: CloseReason,
        first: Option<&Bytes>,
        metrics: &Metrics,
        out: &mut Vec<Inbound>,
    ) {
        self.close_saying(link, reason, first, reason.message(), metrics, out);
    }

    /// Closes every session for `reason`.
    pub fn close_all(&mut self, reason: CloseReason, metrics: &Metrics, out: &mut Vec<Inbound>) {
        let links: Vec<LinkId> = self.by_link.keys().copied().collect();
        for link in links {
            self.close(link, reason, None, metrics, out);
        }
    }
}

/// Refuses a session before admission: its task writes `first` (a Busy
/// websocket frame of the core's) and the Error, and closes.
pub fn refuse(handed: Handover, reason: CloseReason, first: Option<&Bytes>, metrics: &Metrics) {
    metrics.closed(Transport::WebTransport, reason);
    let text = reason.message().into();
    let _ = handed.to.try_send(ToSession::Close { reason, text, first: first.map(plain) });
}

/// Sends `views` as datagrams; a panic in the transport (peer-controlled
/// limits reach its arithmetic) is kept to this session, which closes as
/// [`CloseReason::Internal`], instead of stopping the tick.
fn send_views<V: std::borrow::Borrow<Bytes>>(
    datagrams: &dyn Datagrams,
    views: impl Iterator<Item = V>,
) -> Result<Vec<Bytes>, CloseReason> {
    crate::guard::caught(|| views.filter_map(|v| datagrams.send_view(v.borrow())).collect()).map_err(|panic| {
        tracing::error!(panic, "a session's datagrams panicked; closing it");
        CloseReason::Internal
    })
}

/// Queues `item`. Errors: why the session closes: its queue is full (too
/// slow), or its task is gone (it ended without a word: a panic).
fn offer(to: &mpsc::Sender<ToSession>, item: ToSession) -> Result<(), CloseReason> {
    match to.try_send(item) {
        Ok(()) => Ok(()),
        Err(TrySendError::Full(_)) => Err(CloseReason::TooSlow),
        Err(TrySendError::Closed(_)) => Err(CloseReason::ClientClosed),
    }
}

/// The Error message `reason` sends with `text` before a close, if it tells
/// the peer (plaintext).
pub fn error_message(reason: CloseReason, text: &str) -> Option<Bytes> {
    reason.tells_peer().then(|| msg::encode_error(reason.code(), text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock;
    use crate::resume::Ticket;
    use mino_protocol::PlayerId;

    /// The views a test session was sent as datagrams, and whether its
    /// task has yet to write the welcome (written, unless told otherwise).
    #[derive(Clone, Debug, Default)]
    struct Sent {
        views: std::sync::Arc<std::sync::Mutex<Vec<Bytes>>>,
        welcome_unwritten: std::sync::Arc<std::sync::atomic::AtomicBool>,
    }

    impl Sent {
        fn views(&self) -> Vec<Bytes> {
            self.views.lock().expect("not poisoned").clone()
        }

        fn welcome_written(&self, written: bool) {
            self.welcome_unwritten.store(!written, std::sync::atomic::Ordering::Relaxed);
        }
    }

    impl Datagrams for Sent {
        fn send_view(&self, view: &Bytes) -> Option<Bytes> {
            self.views.lock().expect("not poisoned").push(view.clone());
            None
        }

        fn welcomed(&self) -> bool {
            !self.welcome_unwritten.load(std::sync::atomic::Ordering::Relaxed)
        }
    }

    fn joined(remotes: &mut Remotes, link: u64, queue: usize) -> (mpsc::Receiver<ToSession>, Sent) {
        joined_with(remotes, link, queue, Welcome::Now)
    }

    /// A session of `link` joined, its welcome as `welcome` says.
    fn joined_with(
        remotes: &mut Remotes,
        link: u64,
        queue: usize,
        welcome: Welcome,
    ) -> (mpsc::Receiver<ToSession>, Sent) {
        let limits = Limits::of(&crate::config::Config::default().socket);
        let (to, rx) = mpsc::channel(queue);
        let now = clock::now();
        let ticket = Ticket::issue(0, &mut rand::rng());
        let player = Player::new(PlayerId(link as u32), LinkId(link), ticket, None, &limits, now);
        let sent = Sent::default();
        remotes.join(Handover { to, datagrams: Box::new(sent.clone()) }, player, b"welcome", welcome, now);
        (rx, sent)
    }

    fn tick_with_an_event() -> TickFrame {
        TickFrame { events: vec![ws_frame::binary(b"chat")], ..TickFrame::default() }
    }

    #[tokio::test]
    async fn a_session_gets_plaintext_and_one_whose_queue_fills_is_too_slow() {
        let (mut remotes, metrics, mut out) = (Remotes::default(), Metrics::unregistered(), Vec::new());
        let (mut rx, sent) = joined(&mut remotes, 1, 2);
        remotes.deliver(&tick_with_an_event(), &metrics, &mut out);
        assert!(matches!(rx.try_recv(), Ok(ToSession::Message(w)) if &w[..] == b"welcome"));
        let Ok(ToSession::Messages(messages)) = rx.try_recv() else { panic!("the tick") };
        assert_eq!(messages, vec![Bytes::from_static(b"chat")], "the websocket framing taken off");
        assert!(sent.views().is_empty(), "no view frame this tick");
        // Nobody reads: the queue fills and the session is closed as too slow.
        for _ in 0..3 {
            remotes.deliver(&tick_with_an_event(), &metrics, &mut out);
        }
        assert_eq!(out, vec![Inbound::Left { player: PlayerId(1), link: LinkId(1) }]);
        assert!(!remotes.has(LinkId(1)));
    }

    /// A tick whose one view (`view`) goes to `link`.
    fn tick_with_a_view(link: u64, view: &'static [u8]) -> TickFrame {
        TickFrame {
            views: vec![crate::shard::ViewFrames { frames: vec![ws_frame::binary(view)] }],
            recipients: crate::shard::Recipients::new(vec![(LinkId(link), 0)]),
            ..TickFrame::default()
        }
    }

    #[tokio::test]
    async fn a_sessions_first_views_wait_a_whole_tick_after_its_welcome() {
        // Sent with the welcome, they overtook it (the welcome goes by the
        // session's task and stream) and the client dropped them.
        let (mut remotes, metrics, mut out) = (Remotes::default(), Metrics::unregistered(), Vec::new());
        let (_rx, sent) = joined(&mut remotes, 3, 8);
        let views = |sent: &Sent| sent.views();
        remotes.deliver(&tick_with_a_view(3, b"first"), &metrics, &mut out);
        assert!(views(&sent).is_empty(), "the tick the welcome was queued in holds its views");
        remotes.deliver(&tick_with_a_view(3, b"second"), &metrics, &mut out);
        assert_eq!(views(&sent), vec![Bytes::from_static(b"first"), Bytes::from_static(b"second")], "in order");
        remotes.deliver(&tick_with_a_view(3, b"third"), &metrics, &mut out);
        assert_eq!(views(&sent).len(), 3, "then each tick's as it comes");
        // A held welcome (clustered: until the session is stored): what the
        // ticks gathered meanwhile waits for the tick after its release too.
        let (_rx, sent) = joined(&mut remotes, 4, 8);
        let now = clock::now();
        remotes.by_link.get_mut(&LinkId(4)).expect("joined").held = Some(Box::new(HeldRemote {
            welcome: Bytes::from_static(b"w"),
            until: now,
            messages: vec![],
            views: vec![],
        }));
        remotes.deliver(&tick_with_a_view(4, b"gathered"), &metrics, &mut out);
        remotes.welcome(LinkId(4), &metrics, &mut out);
        assert!(views(&sent).is_empty(), "not sent with the welcome");
        remotes.deliver(&tick_with_a_view(4, b"next"), &metrics, &mut out);
        assert!(views(&sent).is_empty(), "nor in the tick it was released in");
        remotes.deliver(&tick_with_a_view(4, b"after"), &metrics, &mut out);
        let got: Vec<Bytes> = views(&sent);
        assert_eq!(got, ["gathered", "next", "after"].map(|v| Bytes::from(v.as_bytes())), "all, in order");
        assert!(out.is_empty(), "nobody closed: {out:?}");
        // A task that has not written the welcome yet: held until it has.
        let (_rx, sent) = joined(&mut remotes, 5, 8);
        sent.welcome_written(false);
        for _ in 0..3 {
            remotes.deliver(&tick_with_a_view(5, b"v"), &metrics, &mut out);
        }
        assert!(views(&sent).is_empty(), "the welcome is not written");
        sent.welcome_written(true);
        remotes.deliver(&tick_with_a_view(5, b"v"), &metrics, &mut out);
        assert_eq!(views(&sent).len(), 4, "written: every view held, then this tick's");
        // One that never writes it: its views wait FIRST_VIEWS_MAX_TICKS
        // ticks at most, then go (its write timeout closes it, if stuck).
        let (_rx, sent) = joined(&mut remotes, 6, 64);
        sent.welcome_written(false);
        for _ in 0..FIRST_VIEWS_MAX_TICKS {
            remotes.deliver(&tick_with_a_view(6, b"v"), &metrics, &mut out);
        }
        assert!(views(&sent).is_empty(), "held for {FIRST_VIEWS_MAX_TICKS} ticks");
        remotes.deliver(&tick_with_a_view(6, b"v"), &metrics, &mut out);
        assert_eq!(views(&sent).len(), FIRST_VIEWS_MAX_TICKS as usize + 1, "then every view held, and this tick's");
        assert!(out.is_empty(), "nobody closed: {out:?}");
    }

    #[tokio::test]
    async fn a_held_sessions_replies_wait_for_its_welcome() {
        // Clustered, a welcome is held until the session is stored: a pong
        // or names answered meanwhile went before it (and the session's
        // task took its first write for the welcome's).
        let (mut remotes, metrics, mut out) = (Remotes::default(), Metrics::unregistered(), Vec::new());
        let (mut rx, _sent) = joined_with(&mut remotes, 7, 8, Welcome::Held);
        remotes.send(LinkId(7), &ws_frame::binary(b"names"), &metrics, &mut out);
        assert!(rx.try_recv().is_err(), "nothing before the welcome");
        remotes.welcome(LinkId(7), &metrics, &mut out);
        let Ok(ToSession::Messages(first)) = rx.try_recv() else { panic!("the welcome and what waited") };
        assert_eq!(first, [Bytes::from_static(b"welcome"), Bytes::from_static(b"names")]);
        remotes.send(LinkId(7), &ws_frame::binary(b"later"), &metrics, &mut out);
        assert!(matches!(rx.try_recv(), Ok(ToSession::Message(m)) if &m[..] == b"later"), "then at once");
        assert!(out.is_empty(), "nobody closed: {out:?}");
    }

    #[tokio::test]
    async fn a_session_whose_task_is_gone_leaves() {
        let (mut remotes, metrics, mut out) = (Remotes::default(), Metrics::unregistered(), Vec::new());
        drop(joined(&mut remotes, 2, 4).0);
        remotes.deliver(&tick_with_an_event(), &metrics, &mut out);
        assert_eq!(out, vec![Inbound::Left { player: PlayerId(2), link: LinkId(2) }]);
    }
}
