//! Prometheus metrics of one shard, served at `/metrics` in the text format.
//!
//! Names carry their units (`_seconds`, `_bytes`) and counters end in `_total`:
//!
//! | metric | meaning |
//! |---|---|
//! | `mino_players` | players simulated by this shard |
//! | `mino_connections` | open websockets (joined or not); WebTransport sessions are `mino_webtransport_sessions` |
//! | `mino_tick_duration_seconds` | time one tick's work took (step, encode, publish) |
//! | `mino_tick_deliver_seconds` | the part of a tick's work spent writing its frames to the websockets, and sending WebTransport sessions their datagrams and queueing their streams' messages (within `mino_tick_duration_seconds`): on a loaded machine the last socket written waits this long after the first, so its spread from tick to tick is the spread of those sockets' snapshot gaps |
//! | `mino_tick_lateness_seconds` | how late each tick started after its scheduled instant |
//! | `mino_ticks_total` | ticks run |
//! | `mino_ticks_late_total` | ticks that started more than a fifth of a period late |
//! | `mino_ticks_skipped_total` | scheduled ticks skipped after a stall (never replayed) |
//! | `mino_snapshots_encoded_total` | snapshots encoded (one a tick) |
//! | `mino_views_assembled_total` | views whose frames a tick assembled (one per group of sockets seeing the same cells); a view whose cells did not change is skipped, so a standing place adds none |
//! | `mino_frames_sent_total` | websocket frames written whole (tick frames, pings, pongs, welcome, busy, move, error, close); websockets only: a WebTransport session's are `mino_webtransport_datagrams_total` and `mino_webtransport_stream_messages_total` |
//! | `mino_sent_bytes_total` | bytes written to websockets, frame headers included; websockets only: a WebTransport session's are `mino_webtransport_sent_bytes_total` |
//! | `mino_writes_total` | websocket flushes: one a socket a tick when healthy (websockets only) |
//! | `mino_writes_blocked_total` | times a websocket's buffer filled and cut a write short (once per episode); the session finishes the write (websockets only) |
//! | `mino_view_resyncs_total` | sockets whose waiting view frames, past 64, were dropped (deltas cannot be skipped): each is sent every cell it sees anew, as full forms, once its socket drains. With the default `--outbound-ticks` and `--write-timeout-ms` a blocked socket is closed as too slow first, so these are joining sockets whose welcome was held that long (clustered, their session being stored), or any socket where both limits were raised past 64 ticks |
//! | `mino_sockets_closed_total{transport,reason}` | websockets and WebTransport sessions closed, by [`Transport`] label (`websocket`, `webtransport`) and [`crate::close::CloseReason`] label; each closed once, whether refused before its admission or closed after it (a session whose QUIC handshake failed is none: it never opened) |
//! | `mino_upgrades_refused_total{reason}` | websocket upgrade requests refused, by [`crate::websocket::handshake::UpgradeRefusal`] label: `method` (not a GET, 405), `http_version` (HTTP/1.0), `host` (no or several Host headers), `not_upgrade` (no Connection: upgrade or Upgrade: websocket), `version` (Sec-WebSocket-Version not 13, 426), `key` (Sec-WebSocket-Key missing, repeated, or not the base64 of 16 bytes) |
//! | `mino_unready_refusals_total{reason}` | requests that would begin a session (a websocket upgrade, a `/webtransport` offer) refused with 503 while the shard takes no players, by [`crate::http::NotReady`] label: `shutting_down`, `draining`, `redis_down` (clustered, the last heartbeat did not reach Redis, or Redis refused it), `shard_id_taken` (another process of the place holds this shard id); a load balancer asks another shard |
//! | `mino_connections_over_cap_total` | connections accepted while `--max-connections` were open: sent a 503 when the socket takes it at once (best effort: a request still unread turns the close into a reset, which may erase it; a load balancer retries on either) and closed, and WebTransport sessions refused at their QUIC handshake past their own cap of the same number (a warning says so at most once every 10 s) |
//! | `mino_accept_errors_total{kind}` | failed accepts on either listener, by [`AcceptErrorKind`] label: `descriptors` (EMFILE, ENFILE: every descriptor in use; the admin listener still answers on a reserved one), `memory` (ENOBUFS, ENOMEM), `other` |
//! | `mino_busy_refusals_total{reason}` | hellos refused, by [`crate::admission::Refusal`] label: `full`, `overloaded`, `draining`, `unavailable` (clustered, no player id to give: Redis out of reach since the start) |
//! | `mino_auth_refusals_total{reason}` | hellos whose access token was refused, by [`crate::auth::AuthError`] label: `missing` (guests denied), `expired`, `not_yet_valid`, `bad_signature`, `wrong_issuer`, `wrong_audience`, `malformed` |
//! | `mino_admission_overloaded` | 1 while the busy rule refuses players |
//! | `mino_redis_up` | clustered: 1 while the last heartbeat reached Redis |
//! | `mino_redis_reconnects_total` | clustered: subscriptions rebuilt and heartbeats recovered |
//! | `mino_redis_publish_failures_total` | clustered: publishes that failed (the frame is dropped) |
//! | `mino_relay_dropped_total{kind}` | clustered: frames dropped, by [`DropKind`] label: `publish_snapshot` (Redis, or one slot's primary, slower than the tick: the oldest waiting is dropped), `publish_event` (the publish queue full, a publish failed, a slot lane's event backlog full while its primary is down, or a fenced shard's held queue full), `relay_snapshot` (tick queue full or shard not live), `relay_replaced` (two of a shard arrived within one tick; the older was never sent), `invalid` (a frame from Redis that failed verification) |
//! | `mino_relay_frames_total` | clustered: frames received from other shards |
//! | `mino_relay_lag_seconds` | clustered: age of a relayed snapshot when handed to sockets (publisher's tick to our tick) |
//! | `mino_cluster_shards` | clustered: other live shards |
//! | `mino_region_subscriptions` | clustered, area of interest: region channels subscribed |
//! | `mino_redis_mode{mode}` | clustered: 1 for how Redis is reached: `node` (`--redis-url`), `sentinel` (`--redis-sentinel`), `cluster` (`--redis-cluster`) |
//! | `mino_redis_failovers_total{reason}` | clustered: command connections moved to a new primary, by [`FailoverReason`] label: `readonly` (a write answered `READONLY`: the node was demoted; the pool was dropped and rebuilt), `primary_moved` (the sentinels named another primary than before) |
//! | `mino_redis_resubscribes_total{reason}` | clustered: subscriptions renewed, by [`ResubscribeReason`] label: `slot_moved` (the server unsubscribed a shard channel whose slot migrated; subscribed again on its new node), `node_lost` (a cluster node connection dropped), `connection_lost` (the subscription connection ended), `silent` (the subscription connection did not answer a ping), `primary_changed` (the command connections found a demoted primary) |
//! | `mino_core_panics_total{kind}` | panics caught in the shard core while it handled one connection's request, by [`PanicKind`] label: `command` (a handshake's request: reserve, resume claim, sign-in, join), `event` (a joined player's input, chat, names request or leave); the connection is closed (1011 where it can still be told) and the shard goes on. Any is a bug: its log line says what |
//! | `mino_anti_entropy_repairs_total{kind}` | clustered: cross-shard state repaired from Redis after a lost message, by [`RepairKind`] label: `roster` (a periodic read of another shard's players hash changed what this shard knew of its players), `ownership` (a player here whose session another shard owns: its takeover notice was lost), `relayed_cell` (another shard's cell not heard for 72 steps, occupied or changed just before, shown empty: its emptying was lost with its bundles) |
//! | `mino_webtransport_sessions` | open WebTransport sessions (`--webtransport-listen`), from the QUIC handshake to the close |
//! | `mino_webtransport_datagrams_total` | datagrams sent to WebTransport sessions (each a whole view frame, or a cut of one) |
//! | `mino_webtransport_resyncs_total` | Resync messages of WebTransport clients taking deltas over datagrams: each a change it missed (a lost datagram), answered with its view whole at each cell's next due step |
//! | `mino_webtransport_stream_messages_total` | messages written to WebTransport sessions' streams (welcome, chat, presence, the Error before a close, view frames that went on the stream, …), each counted once QUIC has taken it whole |
//! | `mino_webtransport_sent_bytes_total{path}` | bytes written to WebTransport sessions, by [`SendPath`] label: `datagram` (the datagrams' payloads, each a view frame or a cut of one, as counted in `mino_webtransport_datagrams_total`), `stream` (the stream's messages with their 4-byte length prefixes, counted once QUIC has taken them whole). What the shard hands QUIC: WebTransport's datagram header, QUIC's packet headers, encryption, acknowledgements and retransmissions are not counted (the websocket's `mino_sent_bytes_total` is what its socket's writes took, frame headers included) |
//! | `mino_webtransport_unsent_total{reason}` | view frame parts a WebTransport session was not sent as datagrams, by [`Unsent`] label: `too_big` (a cell whose items alone are over the datagram limit: sent on the session's stream instead), `no_datagrams` (the peer takes no datagrams, or only under 1,000 bytes: its views go whole on its stream), `failed` (the connection refused the datagram: closing, or its limit shrank meanwhile), `congested` (datagrams that found the session's send queue, `--webtransport-send-queue-bytes`, full: the path is slower than the frames; each was sent, and quinn dropped the oldest waiting datagrams, stale by then, to make room) |

use crate::admission::Refusal;
use crate::auth::AuthError;
use crate::close::CloseReason;
use crate::topology::Mode;
use crate::websocket::handshake::UpgradeRefusal;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Registry, Unit};

/// Label set with one `reason` label, made only from a reason enum's `label()`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabel {
    reason: &'static str,
}

/// What the shard core was doing for one connection when it panicked: the
/// `kind` label of `mino_core_panics_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PanicKind {
    /// A request of a handshake task (reserve, resume claim, sign-in, join).
    Command,
    /// Something a joined player sent (input, chat, names request) or its leave.
    Event,
}

impl PanicKind {
    /// Every kind, for documentation tests.
    pub const ALL: [PanicKind; 2] = [PanicKind::Command, PanicKind::Event];

    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            PanicKind::Command => "command",
            PanicKind::Event => "event",
        }
    }
}

/// What a socket is: the `transport` label of `mino_sockets_closed_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transport {
    /// A websocket (RFC 6455 over TCP, or a Unix socket behind a proxy).
    Websocket,
    /// A WebTransport session (HTTP/3 over QUIC, `--webtransport-listen`).
    WebTransport,
}

impl Transport {
    /// Every transport, for documentation tests.
    pub const ALL: [Transport; 2] = [Transport::Websocket, Transport::WebTransport];

    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            Transport::Websocket => "websocket",
            Transport::WebTransport => "webtransport",
        }
    }
}

/// How bytes went to a WebTransport session: the `path` label of
/// `mino_webtransport_sent_bytes_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SendPath {
    /// As a datagram (a view frame, or a cut of one).
    Datagram,
    /// On the session's reliable stream (length-prefixed messages).
    Stream,
}

impl SendPath {
    /// Every path, in [`Metrics`]'s order of its series (and for documentation tests).
    pub const ALL: [SendPath; 2] = [SendPath::Datagram, SendPath::Stream];

    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            SendPath::Datagram => "datagram",
            SendPath::Stream => "stream",
        }
    }
}

/// Why a frame on its way to or from Redis was dropped: the `kind` label of
/// `mino_relay_dropped_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropKind {
    /// Redis was slower than the tick: an older own snapshot was skipped.
    PublishSnapshot,
    /// An own chat, presence or park frame was not published (queue full,
    /// publish failed, or a fenced shard's held queue full).
    PublishEvent,
    /// A relayed snapshot was dropped (tick queue full, or its shard not live).
    RelaySnapshot,
    /// Two relayed snapshots of one shard arrived within one tick: the older
    /// was never sent.
    RelayReplaced,
    /// A frame from Redis failed verification.
    Invalid,
}

impl DropKind {
    /// Every kind, for documentation tests.
    pub const ALL: [DropKind; 5] = [
        DropKind::PublishSnapshot,
        DropKind::PublishEvent,
        DropKind::RelaySnapshot,
        DropKind::RelayReplaced,
        DropKind::Invalid,
    ];

    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            DropKind::PublishSnapshot => "publish_snapshot",
            DropKind::PublishEvent => "publish_event",
            DropKind::RelaySnapshot => "relay_snapshot",
            DropKind::RelayReplaced => "relay_replaced",
            DropKind::Invalid => "invalid",
        }
    }
}

/// Why the command connections moved to a new primary: the `reason` label
/// of `mino_redis_failovers_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FailoverReason {
    /// A write was answered `READONLY`.
    Readonly,
    /// The sentinels named another primary.
    PrimaryMoved,
}

impl FailoverReason {
    /// Every reason, for documentation tests.
    pub const ALL: [FailoverReason; 2] = [FailoverReason::Readonly, FailoverReason::PrimaryMoved];

    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            FailoverReason::Readonly => "readonly",
            FailoverReason::PrimaryMoved => "primary_moved",
        }
    }
}

/// Why a subscription was renewed: the `reason` label of
/// `mino_redis_resubscribes_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResubscribeReason {
    /// The server unsubscribed a shard channel (its slot migrated).
    SlotMoved,
    /// A cluster node connection dropped.
    NodeLost,
    /// The subscription connection ended.
    ConnectionLost,
    /// The subscription connection did not answer a ping.
    Silent,
    /// The command connections found a demoted primary.
    PrimaryChanged,
}

impl ResubscribeReason {
    /// Every reason, for documentation tests.
    pub const ALL: [ResubscribeReason; 5] = [
        ResubscribeReason::SlotMoved,
        ResubscribeReason::NodeLost,
        ResubscribeReason::ConnectionLost,
        ResubscribeReason::Silent,
        ResubscribeReason::PrimaryChanged,
    ];

    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            ResubscribeReason::SlotMoved => "slot_moved",
            ResubscribeReason::NodeLost => "node_lost",
            ResubscribeReason::ConnectionLost => "connection_lost",
            ResubscribeReason::Silent => "silent",
            ResubscribeReason::PrimaryChanged => "primary_changed",
        }
    }
}

/// What the anti-entropy repaired: the `kind` label of
/// `mino_anti_entropy_repairs_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RepairKind {
    /// Another shard's players, from its players hash.
    Roster,
    /// A player here whose session another shard owns.
    Ownership,
    /// Another shard's cell not heard for 72 steps, occupied or changed
    /// just before, taken for empty (`STALE_STEPS`, `shard/aoi.rs`): its
    /// emptying was lost with its bundles, or some views were never due
    /// to send its last change.
    RelayedCell,
}

impl RepairKind {
    /// Every kind, for documentation tests.
    pub const ALL: [RepairKind; 3] = [RepairKind::Roster, RepairKind::Ownership, RepairKind::RelayedCell];

    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            RepairKind::Roster => "roster",
            RepairKind::Ownership => "ownership",
            RepairKind::RelayedCell => "relayed_cell",
        }
    }
}

/// Why part of a view frame was not sent to a WebTransport session: the
/// `reason` label of `mino_webtransport_unsent_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unsent {
    /// A cell whose items alone are over the datagram limit.
    TooBig,
    /// The peer takes no datagrams, or only under 1,000 bytes (its views go
    /// whole on its stream).
    NoDatagrams,
    /// The connection refused the datagram.
    Failed,
    /// The session's send queue was full: the datagram went, older waiting
    /// ones (stale by then) were dropped to make room.
    Congested,
}

impl Unsent {
    /// Every reason, for documentation tests.
    pub const ALL: [Unsent; 4] = [Unsent::TooBig, Unsent::NoDatagrams, Unsent::Failed, Unsent::Congested];

    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            Unsent::TooBig => "too_big",
            Unsent::NoDatagrams => "no_datagrams",
            Unsent::Failed => "failed",
            Unsent::Congested => "congested",
        }
    }
}

/// Why an `accept` failed: the `kind` label of `mino_accept_errors_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AcceptErrorKind {
    /// Every descriptor of the process (EMFILE) or the system (ENFILE) is in use.
    Descriptors,
    /// The kernel is out of memory for sockets (ENOBUFS, ENOMEM).
    Memory,
    /// Anything else.
    Other,
}

impl AcceptErrorKind {
    /// Every kind, for documentation tests.
    pub const ALL: [AcceptErrorKind; 3] =
        [AcceptErrorKind::Descriptors, AcceptErrorKind::Memory, AcceptErrorKind::Other];

    /// The kind of an accept error.
    pub fn of(e: &std::io::Error) -> AcceptErrorKind {
        const EMFILE: i32 = 24;
        const ENFILE: i32 = 23;
        const ENOMEM: i32 = 12;
        const ENOBUFS: i32 = 105;
        match e.raw_os_error() {
            Some(EMFILE | ENFILE) => AcceptErrorKind::Descriptors,
            Some(ENOMEM | ENOBUFS) => AcceptErrorKind::Memory,
            _ => AcceptErrorKind::Other,
        }
    }

    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            AcceptErrorKind::Descriptors => "descriptors",
            AcceptErrorKind::Memory => "memory",
            AcceptErrorKind::Other => "other",
        }
    }
}

/// Frames, bytes and system calls of some writes, added to the metrics in
/// one go by [`Metrics::count_writes`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Frames written whole.
    pub frames: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Write system calls that wrote something.
    pub writes: u64,
    /// Writes the kernel refused or cut short (socket buffer full).
    pub blocked: u64,
}

/// Every metric of the shard; cheap to clone (handles to shared atomics).
#[derive(Clone)]
pub struct Metrics {
    /// See module docs.
    pub players: Gauge,
    /// See module docs.
    pub connections: Gauge,
    /// See module docs.
    pub tick_duration: Histogram,
    /// Writing a tick's frames to the websockets (`Hub::deliver`), seconds
    /// (buckets 0.25 ms to about 66 ms, a quarter apart: fine enough for its
    /// p95 against the 50 ms period).
    pub tick_deliver: Histogram,
    /// See module docs.
    pub tick_lateness: Histogram,
    /// See module docs.
    pub ticks: Counter,
    /// See module docs.
    pub ticks_late: Counter,
    /// See module docs.
    pub ticks_skipped: Counter,
    /// See module docs.
    pub snapshots_encoded: Counter,
    /// See module docs.
    pub views_assembled: Counter,
    /// See module docs.
    pub frames_sent: Counter,
    /// See module docs.
    pub bytes_sent: Counter,
    /// See module docs.
    pub writes: Counter,
    /// See module docs.
    pub writes_blocked: Counter,
    /// See module docs.
    pub sockets_closed: Family<ClosedLabel, Counter>,
    /// Sockets whose view frames were dropped while they were blocked, sent
    /// their view anew.
    pub view_resyncs: Counter,
    /// See module docs.
    pub busy_refusals: Family<ReasonLabel, Counter>,
    /// See module docs.
    pub auth_refusals: Family<ReasonLabel, Counter>,
    pub upgrades_refused: Family<ReasonLabel, Counter>,
    /// See module docs.
    pub unready_refusals: Family<ReasonLabel, Counter>,
    /// See module docs.
    pub connections_over_cap: Counter,
    /// See module docs.
    pub accept_errors: Family<KindLabel, Counter>,
    /// See module docs.
    pub overloaded: Gauge,
    /// See module docs.
    pub redis_up: Gauge,
    /// See module docs.
    pub redis_reconnects: Counter,
    /// See module docs.
    pub publish_failures: Counter,
    /// See module docs.
    pub relay_dropped: Family<KindLabel, Counter>,
    /// See module docs.
    pub relay_frames: Counter,
    /// See module docs.
    pub relay_lag: Histogram,
    /// See module docs.
    pub cluster_shards: Gauge,
    /// See module docs.
    pub region_subscriptions: Gauge,
    /// See module docs.
    pub redis_mode: Family<ModeLabel, Gauge>,
    /// See module docs.
    pub redis_failovers: Family<ReasonLabel, Counter>,
    /// See module docs.
    pub redis_resubscribes: Family<ReasonLabel, Counter>,
    /// See module docs.
    pub repairs: Family<KindLabel, Counter>,
    /// See module docs.
    pub core_panics: Family<KindLabel, Counter>,
    /// See module docs.
    pub webtransport_sessions: Gauge,
    /// See module docs.
    pub webtransport_datagrams: Counter,
    /// See module docs.
    pub webtransport_resyncs: Counter,
    /// See module docs.
    pub webtransport_unsent: Family<ReasonLabel, Counter>,
    /// See module docs.
    pub webtransport_stream_messages: Counter,
    /// See module docs.
    pub webtransport_sent_bytes: Family<PathLabel, Counter>,
    /// The two series of `webtransport_sent_bytes`, made at the start and
    /// shared with it: a datagram counts with one atomic add, not a lookup
    /// in the family's map (indexed by [`SendPath`]).
    webtransport_sent_by_path: [Counter; 2],
}

/// Label set of `mino_sockets_closed_total`, made only from
/// [`Transport::label`] and [`crate::close::CloseReason::label`].
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ClosedLabel {
    transport: &'static str,
    reason: &'static str,
}

/// Label set with one `path` label, made only from [`SendPath::label`].
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PathLabel {
    path: &'static str,
}

/// Label set with one `mode` label, made only from
/// [`crate::topology::Mode::label`].
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ModeLabel {
    mode: &'static str,
}

/// Label set with one `kind` label, made only from [`DropKind::label`] or
/// [`AcceptErrorKind::label`].
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabel {
    kind: &'static str,
}

/// Makes the series of each of `labels` of `family` at 0: a counter
/// whose series is made at its first increment has no earlier sample, so
/// Prometheus sees no increase on the first.
fn zeros<L>(family: &Family<L, Counter>, labels: impl IntoIterator<Item = L>)
where
    L: Clone + std::hash::Hash + Eq,
{
    for label in labels {
        drop(family.get_or_create(&label));
    }
}

impl Metrics {
    /// Creates the metrics and registers them in `registry`.
    pub fn register(registry: &mut Registry) -> Metrics {
        let webtransport_sent_bytes = Family::<PathLabel, Counter>::default();
        let webtransport_sent_by_path =
            SendPath::ALL.map(|path| webtransport_sent_bytes.get_or_create(&PathLabel { path: path.label() }).clone());
        let m = Metrics {
            players: Gauge::default(),
            connections: Gauge::default(),
            // 50 us .. ~0.8 s
            tick_duration: Histogram::new(exponential_buckets(0.000_05, 2.0, 15)),
            tick_deliver: Histogram::new(exponential_buckets(0.000_25, 1.25, 26)),
            tick_lateness: Histogram::new(exponential_buckets(0.000_05, 2.0, 15)),
            ticks: Counter::default(),
            ticks_late: Counter::default(),
            ticks_skipped: Counter::default(),
            snapshots_encoded: Counter::default(),
            views_assembled: Counter::default(),
            frames_sent: Counter::default(),
            bytes_sent: Counter::default(),
            writes: Counter::default(),
            writes_blocked: Counter::default(),
            sockets_closed: Family::default(),
            view_resyncs: Counter::default(),
            busy_refusals: Family::default(),
            auth_refusals: Family::default(),
            upgrades_refused: Family::default(),
            unready_refusals: Family::default(),
            connections_over_cap: Counter::default(),
            accept_errors: Family::default(),
            overloaded: Gauge::default(),
            redis_up: Gauge::default(),
            redis_reconnects: Counter::default(),
            publish_failures: Counter::default(),
            relay_dropped: Family::default(),
            relay_frames: Counter::default(),
            // 1 ms .. ~16 s
            relay_lag: Histogram::new(exponential_buckets(0.001, 2.0, 15)),
            cluster_shards: Gauge::default(),
            region_subscriptions: Gauge::default(),
            redis_mode: Family::default(),
            redis_failovers: Family::default(),
            redis_resubscribes: Family::default(),
            repairs: Family::default(),
            core_panics: Family::default(),
            webtransport_sessions: Gauge::default(),
            webtransport_datagrams: Counter::default(),
            webtransport_resyncs: Counter::default(),
            webtransport_unsent: Family::default(),
            webtransport_stream_messages: Counter::default(),
            webtransport_sent_bytes,
            webtransport_sent_by_path,
        };
        // The series that alerts take `increase` or `rate` of exist from the
        // start, at 0: a counter's series made at its first increment has no
        // earlier sample, so Prometheus would see no increase on the first
        // panic or failed accept.
        zeros(&m.core_panics, PanicKind::ALL.map(|k| KindLabel { kind: k.label() }));
        zeros(&m.accept_errors, AcceptErrorKind::ALL.map(|k| KindLabel { kind: k.label() }));
        zeros(&m.relay_dropped, DropKind::ALL.map(|k| KindLabel { kind: k.label() }));
        // And those an operator alerts or graphs by reason (an outside trial
        // found them missing until the first of each; WebTransport's and the
        // readiness refusals' are made by who serves them).
        m.expect_closes(Transport::Websocket);
        zeros(&m.busy_refusals, Refusal::ALL.map(|r| ReasonLabel { reason: r.label() }));
        zeros(&m.auth_refusals, AuthError::ALL.map(|e| ReasonLabel { reason: e.label() }));
        zeros(&m.upgrades_refused, UpgradeRefusal::ALL.map(|r| ReasonLabel { reason: r.label() }));
        let r = registry;
        r.register("mino_players", "Players simulated by this shard", m.players.clone());
        r.register("mino_connections", "Open websockets", m.connections.clone());
        r.register_with_unit("mino_tick_duration", "Work time of one tick", Unit::Seconds, m.tick_duration.clone());
        r.register_with_unit(
            "mino_tick_deliver",
            "Time a tick's writes to the websockets took",
            Unit::Seconds,
            m.tick_deliver.clone(),
        );
        r.register_with_unit("mino_tick_lateness", "Tick start lateness", Unit::Seconds, m.tick_lateness.clone());
        r.register("mino_ticks", "Ticks run", m.ticks.clone());
        r.register("mino_ticks_late", "Ticks started over a fifth of a period late", m.ticks_late.clone());
        r.register("mino_ticks_skipped", "Scheduled ticks skipped after a stall", m.ticks_skipped.clone());
        r.register("mino_snapshots_encoded", "Snapshots encoded", m.snapshots_encoded.clone());
        r.register("mino_views_assembled", "Views whose frames a tick assembled", m.views_assembled.clone());
        r.register("mino_frames_sent", "Websocket frames written whole", m.frames_sent.clone());
        r.register_with_unit("mino_sent", "Bytes written to websockets", Unit::Bytes, m.bytes_sent.clone());
        r.register("mino_writes", "Websocket flushes", m.writes.clone());
        r.register("mino_writes_blocked", "Writes cut short by a full socket buffer", m.writes_blocked.clone());
        r.register("mino_sockets_closed", "Sockets closed by transport and reason", m.sockets_closed.clone());
        r.register(
            "mino_view_resyncs",
            "Blocked sockets whose view frames were dropped and sent their view anew",
            m.view_resyncs.clone(),
        );
        r.register("mino_busy_refusals", "Hellos refused by reason", m.busy_refusals.clone());
        r.register("mino_auth_refusals", "Access tokens refused by reason", m.auth_refusals.clone());
        r.register("mino_upgrades_refused", "Websocket upgrades refused by reason", m.upgrades_refused.clone());
        r.register(
            "mino_unready_refusals",
            "Session requests refused while taking no players, by reason",
            m.unready_refusals.clone(),
        );
        r.register("mino_accept_errors", "Failed accepts by kind", m.accept_errors.clone());
        r.register(
            "mino_connections_over_cap",
            "Connections refused because --max-connections were open",
            m.connections_over_cap.clone(),
        );
        r.register("mino_admission_overloaded", "1 while the busy rule refuses players", m.overloaded.clone());
        r.register("mino_redis_up", "1 while the last heartbeat reached Redis", m.redis_up.clone());
        r.register(
            "mino_redis_reconnects",
            "Redis subscriptions rebuilt and heartbeats recovered",
            m.redis_reconnects.clone(),
        );
        r.register("mino_redis_publish_failures", "Failed publishes", m.publish_failures.clone());
        r.register("mino_relay_dropped", "Frames dropped on the way to or from Redis", m.relay_dropped.clone());
        r.register("mino_relay_frames", "Frames received from other shards", m.relay_frames.clone());
        r.register_with_unit(
            "mino_relay_lag",
            "Age of relayed snapshots when forwarded",
            Unit::Seconds,
            m.relay_lag.clone(),
        );
        r.register("mino_cluster_shards", "Other live shards", m.cluster_shards.clone());
        r.register("mino_region_subscriptions", "Region channels subscribed", m.region_subscriptions.clone());
        r.register("mino_redis_mode", "1 for how Redis is reached", m.redis_mode.clone());
        r.register("mino_redis_failovers", "Command connections moved to a new primary", m.redis_failovers.clone());
        r.register("mino_redis_resubscribes", "Subscriptions renewed by reason", m.redis_resubscribes.clone());
        r.register("mino_anti_entropy_repairs", "Cross-shard state repaired after a lost message", m.repairs.clone());
        r.register("mino_core_panics", "Panics caught in the shard core, by what it was doing", m.core_panics.clone());
        r.register("mino_webtransport_sessions", "Open WebTransport sessions", m.webtransport_sessions.clone());
        r.register(
            "mino_webtransport_datagrams",
            "Datagrams sent to WebTransport sessions",
            m.webtransport_datagrams.clone(),
        );
        r.register(
            "mino_webtransport_resyncs",
            "Resyncs asked by WebTransport clients taking deltas over datagrams (a change missed)",
            m.webtransport_resyncs.clone(),
        );
        r.register(
            "mino_webtransport_unsent",
            "View frame parts not sent to WebTransport sessions, by reason",
            m.webtransport_unsent.clone(),
        );
        r.register(
            "mino_webtransport_stream_messages",
            "Messages written to WebTransport sessions' streams",
            m.webtransport_stream_messages.clone(),
        );
        r.register_with_unit(
            "mino_webtransport_sent",
            "Bytes written to WebTransport sessions, by path",
            Unit::Bytes,
            m.webtransport_sent_bytes.clone(),
        );
        m
    }

    /// Counts a panic the shard core had while doing `kind` for a connection.
    pub fn core_panic(&self, kind: PanicKind) {
        self.core_panics.get_or_create(&KindLabel { kind: kind.label() }).inc();
    }

    /// Counts `n` view frame parts not sent to a WebTransport session.
    pub fn unsent(&self, reason: Unsent, n: u64) {
        self.webtransport_unsent.get_or_create(&ReasonLabel { reason: reason.label() }).inc_by(n);
    }

    /// Counts `n` dropped frames of `kind`.
    pub fn dropped(&self, kind: DropKind, n: u64) {
        self.relay_dropped.get_or_create(&KindLabel { kind: kind.label() }).inc_by(n);
    }

    /// Marks how Redis is reached.
    pub fn redis_mode(&self, mode: Mode) {
        self.redis_mode.get_or_create(&ModeLabel { mode: mode.label() }).set(1);
    }

    /// Counts a move of the command connections to a new primary.
    pub fn failover(&self, reason: FailoverReason) {
        self.redis_failovers.get_or_create(&ReasonLabel { reason: reason.label() }).inc();
    }

    /// Counts a renewed subscription.
    pub fn resubscribed(&self, reason: ResubscribeReason) {
        self.redis_resubscribes.get_or_create(&ReasonLabel { reason: reason.label() }).inc();
    }

    /// Counts `n` repairs of `kind`.
    pub fn repaired(&self, kind: RepairKind, n: u64) {
        self.repairs.get_or_create(&KindLabel { kind: kind.label() }).inc_by(n);
    }

    /// Counts a socket of `transport` closed for `reason`.
    pub fn closed(&self, transport: Transport, reason: CloseReason) {
        self.sockets_closed.get_or_create(&ClosedLabel { transport: transport.label(), reason: reason.label() }).inc();
    }

    /// Counts `bytes` written to a WebTransport session by `path`.
    pub fn webtransport_sent(&self, path: SendPath, bytes: usize) {
        let counter = match path {
            SendPath::Datagram => &self.webtransport_sent_by_path[0],
            SendPath::Stream => &self.webtransport_sent_by_path[1],
        };
        counter.inc_by(bytes as u64);
    }

    /// Counts a hello refused for `refusal`.
    pub fn refused(&self, refusal: Refusal) {
        self.busy_refusals.get_or_create(&ReasonLabel { reason: refusal.label() }).inc();
    }

    /// Counts an access token refused for `e`.
    pub fn auth_refused(&self, e: AuthError) {
        self.auth_refusals.get_or_create(&ReasonLabel { reason: e.label() }).inc();
    }

    /// Counts a websocket upgrade refused for `why`.
    pub fn refused_upgrade(&self, why: UpgradeRefusal) {
        self.upgrades_refused.get_or_create(&ReasonLabel { reason: why.label() }).inc();
    }

    /// Makes every close series of `transport` at 0 (a shard serving
    /// WebTransport makes its own when it starts to).
    pub fn expect_closes(&self, transport: Transport) {
        let label = |r: CloseReason| ClosedLabel { transport: transport.label(), reason: r.label() };
        zeros(&self.sockets_closed, CloseReason::ALL.map(label));
    }

    /// Makes every series a shard serving WebTransport counts by reason at 0:
    /// its sessions' closes and its unsent view frames.
    pub fn expect_webtransport(&self) {
        self.expect_closes(Transport::WebTransport);
        zeros(&self.webtransport_unsent, Unsent::ALL.map(|r| ReasonLabel { reason: r.label() }));
    }

    /// Makes every series a clustered shard counts by reason at 0: its
    /// command connections' failovers, its subscriptions' renewals and the
    /// anti-entropy's repairs (alerts and dashboards read their increase,
    /// which misses the first of a series made by it).
    pub fn expect_cluster(&self) {
        zeros(&self.redis_failovers, FailoverReason::ALL.map(|r| ReasonLabel { reason: r.label() }));
        zeros(&self.redis_resubscribes, ResubscribeReason::ALL.map(|r| ReasonLabel { reason: r.label() }));
        zeros(&self.repairs, RepairKind::ALL.map(|k| KindLabel { kind: k.label() }));
    }

    /// Makes the series of each of `reasons` (the `crate::http::NotReady`
    /// labels) of `mino_unready_refusals_total` at 0.
    pub fn expect_unready(&self, reasons: &[&'static str]) {
        zeros(&self.unready_refusals, reasons.iter().map(|&reason| ReasonLabel { reason }));
    }

    /// Counts a session request refused because the shard takes no players,
    /// for `reason` (a `crate::http::NotReady` label).
    pub fn refused_unready(&self, reason: &'static str) {
        self.unready_refusals.get_or_create(&ReasonLabel { reason }).inc();
    }

    /// Counts a failed accept.
    pub fn accept_failed(&self, kind: AcceptErrorKind) {
        self.accept_errors.get_or_create(&KindLabel { kind: kind.label() }).inc();
    }

    /// Adds the frames, bytes and system calls of some writes.
    pub fn count_writes(&self, t: Tally) {
        self.frames_sent.inc_by(t.frames);
        self.bytes_sent.inc_by(t.bytes);
        self.writes.inc_by(t.writes);
        self.writes_blocked.inc_by(t.blocked);
    }

    /// Metrics registered in a throwaway registry (tests, benches).
    pub fn unregistered() -> Metrics {
        Metrics::register(&mut Registry::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counters alerts take `increase` or `rate` of have every label's
    /// series from the start, at 0.
    #[test]
    fn the_alerted_counters_have_every_series_from_the_start() {
        let mut registry = Registry::default();
        let _m = Metrics::register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encode");
        for kind in PanicKind::ALL {
            let series = format!("mino_core_panics_total{{kind=\"{}\"}} 0", kind.label());
            assert!(text.contains(&series), "{series} missing");
        }
        for kind in AcceptErrorKind::ALL {
            let series = format!("mino_accept_errors_total{{kind=\"{}\"}} 0", kind.label());
            assert!(text.contains(&series), "{series} missing");
        }
        for kind in DropKind::ALL {
            let series = format!("mino_relay_dropped_total{{kind=\"{}\"}} 0", kind.label());
            assert!(text.contains(&series), "{series} missing");
        }
        for path in SendPath::ALL {
            let series = format!("mino_webtransport_sent_bytes_total{{path=\"{}\"}} 0", path.label());
            assert!(text.contains(&series), "{series} missing");
        }
        let closes = |text: &str, transport: Transport| {
            CloseReason::ALL.iter().all(|reason| {
                let (t, r) = (transport.label(), reason.label());
                text.contains(&format!("mino_sockets_closed_total{{transport=\"{t}\",reason=\"{r}\"}} 0"))
            })
        };
        assert!(closes(&text, Transport::Websocket), "every websocket close at 0");
        assert!(!text.contains("transport=\"webtransport\""), "none of WebTransport's until it is served");
        assert!(!text.contains("mino_webtransport_unsent_total{"), "nor its unsent frames'");
        assert!(!text.contains("mino_redis_failovers_total{"), "nor a cluster's series standalone");
        _m.expect_webtransport();
        _m.expect_unready(&["draining"]);
        _m.expect_cluster();
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encode");
        assert!(closes(&text, Transport::WebTransport), "then every WebTransport close at 0");
        assert!(text.contains("mino_unready_refusals_total{reason=\"draining\"} 0"));
        let reasons = [
            ("mino_busy_refusals_total", Refusal::ALL.map(Refusal::label).to_vec()),
            ("mino_auth_refusals_total", AuthError::ALL.map(AuthError::label).to_vec()),
            ("mino_upgrades_refused_total", UpgradeRefusal::ALL.map(UpgradeRefusal::label).to_vec()),
            ("mino_webtransport_unsent_total", Unsent::ALL.map(Unsent::label).to_vec()),
            ("mino_redis_failovers_total", FailoverReason::ALL.map(FailoverReason::label).to_vec()),
            ("mino_redis_resubscribes_total", ResubscribeReason::ALL.map(ResubscribeReason::label).to_vec()),
        ];
        for kind in RepairKind::ALL {
            let series = format!("mino_anti_entropy_repairs_total{{kind=\"{}\"}} 0", kind.label());
            assert!(text.contains(&series), "{series} missing");
        }
        for (name, labels) in reasons {
            for label in labels {
                let series = format!("{name}{{reason=\"{label}\"}} 0");
                assert!(text.contains(&series), "{series} missing");
            }
        }
    }

    /// A close is counted under its transport and its reason, each label
    /// as printed.
    #[test]
    fn a_close_is_counted_by_transport_and_reason() {
        let mut registry = Registry::default();
        let m = Metrics::register(&mut registry);
        m.closed(Transport::WebTransport, CloseReason::ClientClosed);
        m.webtransport_sent(SendPath::Stream, 42);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encode");
        assert!(text.contains("mino_sockets_closed_total{transport=\"webtransport\",reason=\"client_closed\"} 1"));
        assert!(text.contains("mino_sockets_closed_total{transport=\"websocket\",reason=\"client_closed\"} 0"));
        assert!(text.contains("mino_webtransport_sent_bytes_total{path=\"stream\"} 42"));
    }

    /// Every label a family can carry is documented in the table above.
    #[test]
    fn every_label_is_documented() {
        let docs = include_str!("metrics.rs");
        let table: Vec<&str> = docs.lines().filter(|l| l.starts_with("//! | `mino_")).collect();
        // A metric's own row (other rows may name it).
        let row = |name: &str| {
            let start = format!("//! | `{name}");
            table.iter().find(|l| l.starts_with(&start)).copied().unwrap_or_default()
        };
        for kind in DropKind::ALL {
            assert!(row("mino_relay_dropped_total").contains(&format!("`{}`", kind.label())), "{kind:?}");
        }
        for kind in PanicKind::ALL {
            assert!(row("mino_core_panics_total").contains(&format!("`{}`", kind.label())), "{kind:?}");
        }
        for e in AuthError::ALL {
            assert!(row("mino_auth_refusals_total").contains(&format!("`{}`", e.label())), "{e:?}");
        }
        for refusal in Refusal::ALL {
            assert!(row("mino_busy_refusals_total").contains(&format!("`{}`", refusal.label())), "{refusal:?}");
        }
        for why in crate::http::NotReady::ALL {
            assert!(row("mino_unready_refusals_total").contains(&format!("`{}`", why.label())), "{why:?}");
        }
        for refusal in UpgradeRefusal::ALL {
            assert!(row("mino_upgrades_refused_total").contains(&format!("`{}`", refusal.label())), "{refusal:?}");
        }
        for reason in FailoverReason::ALL {
            assert!(row("mino_redis_failovers_total").contains(&format!("`{}`", reason.label())), "{reason:?}");
        }
        for reason in ResubscribeReason::ALL {
            assert!(row("mino_redis_resubscribes_total").contains(&format!("`{}`", reason.label())), "{reason:?}");
        }
        for kind in RepairKind::ALL {
            assert!(row("mino_anti_entropy_repairs_total").contains(&format!("`{}`", kind.label())), "{kind:?}");
        }
        for mode in crate::topology::Mode::ALL {
            assert!(row("mino_redis_mode").contains(&format!("`{}`", mode.label())), "{mode:?}");
        }
        for reason in Unsent::ALL {
            assert!(row("mino_webtransport_unsent_total").contains(&format!("`{}`", reason.label())), "{reason:?}");
        }
        for kind in AcceptErrorKind::ALL {
            assert!(row("mino_accept_errors_total").contains(&format!("`{}`", kind.label())), "{kind:?}");
        }
        for transport in Transport::ALL {
            assert!(row("mino_sockets_closed_total").contains(&format!("`{}`", transport.label())), "{transport:?}");
        }
        for path in SendPath::ALL {
            assert!(row("mino_webtransport_sent_bytes_total").contains(&format!("`{}`", path.label())), "{path:?}");
        }
    }
}
