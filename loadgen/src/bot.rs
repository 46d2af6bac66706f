//! A bot: one simulated player that joins, walks (per its [`Profile`]), and
//! measures, reconnecting and resuming per the [`ReconnectPolicy`] until the
//! run stops it. Its observable status ([`BotShared`], in [`crate::status`])
//! can be read while it runs.

use crate::client::{Client, JoinRequest};
use crate::event::Welcomed;
use crate::positions::Positions;
use crate::profile::Profile;
use crate::reconnect::{Ending, Next, ReconnectPolicy, StopReason};
use crate::session::{self, ResumeCheck, SessionCtx};
use crate::stats::{Event, Metric, Stats};
use crate::status::{BotShared, BotState};
use crate::steer::Movement;
use crate::target::{pick, SourceAddrs, Target};
use mino_protocol::PlayerId;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How long a stopping bot waits for the server's close frame.
const CLOSE_LINGER: Duration = Duration::from_millis(500);

/// How long a moved bot waits for the draining server's close before reconnecting.
const MOVE_LINGER: Duration = Duration::from_millis(20);

/// Everything a bot needs to run.
#[derive(Clone, Debug)]
pub struct BotConfig {
    /// Index in the swarm: picks the first target, source address and stats stripe.
    pub index: usize,
    /// Display name (1 to 24 characters).
    pub name: String,
    /// Targets; the bot starts at `target_slot % len` and moves to the next on each attempt.
    pub targets: Arc<[Target]>,
    /// Where it starts in `targets` ([`crate::transport::Transports::target_slot`]).
    pub target_slot: usize,
    /// Local source addresses.
    pub sources: Arc<SourceAddrs>,
    /// Behaviour.
    pub profile: Profile,
    /// Reconnect and Busy retry policy.
    pub policy: ReconnectPolicy,
    /// Bound on connecting, and again on waiting for Welcome.
    pub join_timeout: Duration,
    /// What view frames to ask for.
    pub frames: crate::client::Frames,
    /// How it reaches its shard (every attempt, resumes included).
    pub transport: crate::transport::Transport,
    /// Random seed (directions, jitter).
    pub seed: u64,
    /// Where it walks.
    pub movement: Movement,
    /// Every bot's latest position (area of interest), where the bot
    /// publishes its own; None when the run has no observers.
    pub positions: Option<Arc<Positions>>,
    /// True when the bot observes (needs `positions`).
    pub observer: bool,
}

/// What a bot ended with.
#[derive(Clone, Debug, PartialEq)]
pub struct BotReport {
    /// Bot index.
    pub index: usize,
    /// Why it stopped.
    pub stop: StopReason,
    /// Its last player id.
    pub player_id: Option<PlayerId>,
    /// Its last known position, world units.
    pub last_position: Option<(f32, f32)>,
    /// The close code of the last session the server closed.
    pub close_code: Option<u16>,
    /// Welcomes received.
    pub welcomes: u32,
}

/// One simulated player.
pub struct Bot {
    config: BotConfig,
    shared: Arc<BotShared>,
    stats: Arc<Stats>,
    rng: SmallRng,
    ticket: Option<Vec<u8>>,
    resume: Option<ResumeCheck>,
}

impl Bot {
    /// A bot that records into `stats`; it starts when [`Bot::run`] is awaited.
    pub fn new(config: BotConfig, stats: Arc<Stats>) -> Bot {
        let rng = SmallRng::seed_from_u64(config.seed);
        Bot { config, shared: Arc::default(), stats, rng, ticket: None, resume: None }
    }

    /// The bot's observable state.
    pub fn shared(&self) -> Arc<BotShared> {
        self.shared.clone()
    }

    /// Runs until `cancel` fires or the policy says stop; never panics on
    /// anything the server sends.
    pub async fn run(mut self, cancel: CancellationToken) -> BotReport {
        let mut attempt = 0u32;
        let mut hop = 0usize;
        let stop = loop {
            let next = self.attempt(hop, &mut attempt, &cancel).await;
            hop += 1;
            match next {
                Next::Stop(reason) => break reason,
                Next::Retry { delay, .. } if !delay.is_zero() => {
                    tokio::select! {
                        _ = cancel.cancelled() => break StopReason::Stopped,
                        _ = tokio::time::sleep(delay) => {}
                    }
                }
                Next::Retry { .. } => {}
            }
        };
        self.shared.set_state(BotState::Stopped);
        BotReport {
            index: self.config.index,
            stop,
            player_id: self.shared.player_id(),
            last_position: self.shared.position(),
            close_code: self.shared.close_code(),
            welcomes: self.shared.welcomes(),
        }
    }

    /// One join and, if welcomed, one session; returns what to do next.
    async fn attempt(&mut self, hop: usize, attempt: &mut u32, cancel: &CancellationToken) -> Next {
        let c = &self.config;
        let target = &c.targets[pick(c.targets.len(), c.target_slot, hop)];
        let source = c.sources.pick(c.index);
        self.shared.set_state(BotState::Joining);
        let started = Instant::now();
        let req = JoinRequest {
            name: &c.name,
            ticket: self.ticket.as_deref(),
            access_token: None,
            frames: c.frames,
            transport: c.transport,
        };
        let joined = tokio::select! {
            _ = cancel.cancelled() => return Next::Stop(StopReason::Stopped),
            joined = Client::join(target, source, req, c.join_timeout) => joined,
        };
        match joined {
            Ok((mut client, welcome)) => {
                *attempt = 0;
                let (next, ending) = self.session(&mut client, &welcome, started, cancel).await;
                match ending {
                    Ending::Stopped => client.close(CLOSE_LINGER).await,
                    Ending::Moved => client.close(MOVE_LINGER).await,
                    _ => client.abort(),
                }
                next
            }
            Err(e) => {
                match e.failure() {
                    Some(kind) => self.stats.failure(kind),
                    None => {
                        self.stats.event(Event::Busy);
                        self.shared.refused_busy();
                    }
                }
                tracing::debug!(bot = c.index, url = %target.url, "join failed: {e}");
                let next = c.policy.after_join(e.policy_view(), *attempt, &mut self.rng);
                *attempt += 1;
                if let Next::Retry { keep_ticket: false, .. } = next {
                    // The next Welcome is a new player; `resume` stays so it counts as a fresh rejoin.
                    self.ticket = None;
                }
                let waiting = if e.failure().is_none() { BotState::Busy } else { BotState::Retrying };
                self.shared.set_state(waiting);
                next
            }
        }
    }

    async fn session(
        &mut self,
        client: &mut Client,
        w: &Welcomed,
        started: Instant,
        cancel: &CancellationToken,
    ) -> (Next, Ending) {
        let (stats, bot) = (&*self.stats, self.config.index);
        stats.record(bot, Metric::Welcome, started.elapsed());
        stats.event(Event::Welcome);
        stats.note_tick_hz(w.tick_hz);
        let resume = self.resume.take().filter(|r| {
            let same = w.resumed && w.player_id == r.player_id;
            if same {
                stats.record(bot, Metric::ResumeWelcome, r.closed_at.elapsed());
                stats.event(Event::Resumed);
            } else {
                stats.event(Event::FreshRejoin);
            }
            same
        });
        self.ticket = Some(w.ticket.clone());
        self.shared.welcomed(w);
        stats.connected_delta(1);
        let c = &self.config;
        let ctx = SessionCtx {
            bot,
            stats,
            shared: &self.shared,
            profile: &c.profile,
            movement: c.movement,
            positions: c.positions.as_ref(),
            observer: c.observer,
        };
        let end = session::run(client, w, &ctx, resume, &mut self.rng, cancel).await;
        stats.connected_delta(-1);
        self.shared.set_state(BotState::Retrying);
        if end.ending == Ending::Stopped {
            return (Next::Stop(StopReason::Stopped), Ending::Stopped);
        }
        stats.event(Event::Disconnect);
        if let Some((kind, detail)) = &end.failure {
            stats.failure(*kind);
            tracing::debug!(bot, "session ended: {kind}: {detail}");
        }
        if let Some(code) = end.close_code {
            self.shared.set_close_code(code);
            if code == mino_protocol::wire::CloseCode::SessionReplaced.0 {
                stats.event(Event::Replaced);
            }
        }
        if let Some(t) = end.ticket {
            self.ticket = Some(t);
        }
        self.resume =
            Some(ResumeCheck { closed_at: end.at, player_id: w.player_id, last_position: self.shared.position() });
        (self.config.policy.after_session(end.ending, &mut self.rng), end.ending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::ProfileName;
    use bytes::Bytes;
    use futures_util::{SinkExt, StreamExt};
    use mino_protocol::client::{decode as decode_client, ClientMsg};
    use mino_protocol::server::{encode_move, encode_welcome, WelcomeInfo};
    use mino_protocol::snapshot::PlayerEntry;
    use mino_protocol::wire::{Bounds, CloseCode};
    use mino_protocol::ShardId;
    use std::sync::Mutex;
    use tokio::net::TcpListener;
    use tokio_tungstenite::tungstenite::protocol::{frame::coding::CloseCode as WsCode, CloseFrame};
    use tokio_tungstenite::tungstenite::Message;

    const PLAYER: PlayerId = PlayerId(5);

    fn bounds() -> Bounds {
        Bounds::new(0.0, 0.0, 1000.0, 1000.0)
    }

    /// What a scripted fake shard does with its n-th connection after Welcome.
    #[derive(Clone, Copy)]
    enum Then {
        /// Two snapshots, then a Move carrying ticket [42; 16].
        Move,
        /// Close with this code.
        Close(u16),
        /// Snapshots every 50 ms until the bot leaves.
        Stay,
        /// As `Stay`, but the Welcome and the snapshots put the player 50
        /// units east of where the others do (a resume that lost its place).
        StayElsewhere,
    }

    impl Then {
        /// Where this connection's Welcome and snapshots put the player.
        fn at(self) -> (f32, f32) {
            match self {
                Then::StayElsewhere => (150.0, 100.0),
                _ => (100.0, 100.0),
            }
        }
    }

    fn welcome(resumed: bool, position: (f32, f32)) -> Bytes {
        encode_welcome(&WelcomeInfo {
            player_id: PLAYER,
            shard_id: ShardId(3),
            tick_hz: 20,
            bounds: bounds(),
            speed: 120.0,
            resume_ticket: &[7; 16],
            server_time_ms: 1,
            name: "bot",
            position,
            resumed,
            aoi: None,
            capabilities: mino_protocol::client::Capabilities::DELTAS,
            cell_expiry_ms: 0,
        })
    }

    /// A view frame of the whole place (one cell) at `tick`, listing the bot
    /// at `(x, y)`.
    fn snapshot(tick: u64, (x, y): (f32, f32)) -> Bytes {
        let me = PlayerEntry { id: PLAYER, x, y, heading: 0, moving: false, input_seq: 0 };
        Bytes::from(mino_protocol::view::encode_full_view(3, tick, 1, &[me.quantized(&bounds())]))
    }

    /// A fake shard following `script` per connection; returns its URL and the
    /// tickets each Hello carried.
    async fn fake_shard(script: Vec<Then>) -> (Target, Arc<Mutex<Vec<Option<Vec<u8>>>>>) {
        let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = l.local_addr().expect("addr");
        let hellos = Arc::new(Mutex::new(Vec::new()));
        let seen = hellos.clone();
        tokio::spawn(async move {
            for then in script {
                let Ok((tcp, _)) = l.accept().await else { return };
                let Ok(mut ws) = tokio_tungstenite::accept_async(tcp).await else { return };
                let Some(Ok(Message::Binary(b))) = ws.next().await else { return };
                let Ok(ClientMsg::Hello(h)) = decode_client(&b) else { return };
                let resumed = h.resume_ticket.is_some();
                seen.lock().expect("lock").push(h.resume_ticket);
                let at = then.at();
                let _ = ws.send(Message::Binary(welcome(resumed, at))).await;
                let _ = ws.send(Message::Binary(snapshot(1, at))).await;
                let _ = ws.send(Message::Binary(snapshot(2, at))).await;
                match then {
                    Then::Move => {
                        let _ = ws.send(Message::Binary(encode_move(&[42; 16], "drain"))).await;
                    }
                    Then::Close(code) => {
                        let _ = ws.close(Some(CloseFrame { code: WsCode::from(code), reason: "".into() })).await;
                    }
                    Then::Stay | Then::StayElsewhere => {
                        tokio::spawn(async move {
                            for tick in 3.. {
                                tokio::time::sleep(Duration::from_millis(50)).await;
                                if ws.send(Message::Binary(snapshot(tick, at))).await.is_err() {
                                    break;
                                }
                            }
                        });
                        continue;
                    }
                }
                while let Some(Ok(_)) = ws.next().await {}
            }
        });
        (Target { url: format!("ws://{addr}/ws"), addr, tls: None, webtransport: None }, hellos)
    }

    fn bot(target: Target, stats: Arc<Stats>) -> Bot {
        let config = BotConfig {
            index: 0,
            name: "bot".into(),
            targets: vec![target].into(),
            target_slot: 0,
            sources: Arc::new(SourceAddrs::default()),
            profile: Profile::of(ProfileName::Idle),
            policy: ReconnectPolicy::default(),
            join_timeout: Duration::from_secs(2),
            frames: crate::client::Frames::Deltas,
            transport: crate::transport::Transport::WebSocket,
            seed: 1,
            movement: Movement::Wander,
            positions: None,
            observer: false,
        };
        Bot::new(config, stats)
    }

    async fn wait(limit: Duration, cond: impl Fn() -> bool) -> bool {
        let end = Instant::now() + limit;
        while !cond() && Instant::now() < end {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        cond()
    }

    #[tokio::test]
    async fn move_reconnects_at_once_with_the_new_ticket_and_times_the_resume() {
        let (target, hellos) = fake_shard(vec![Then::Move, Then::Stay]).await;
        let stats = Arc::new(Stats::new());
        let cancel = CancellationToken::new();
        let task = tokio::spawn(bot(target, stats.clone()).run(cancel.clone()));
        assert!(wait(Duration::from_secs(3), || stats.totals().back_in_place == 1).await, "{:?}", stats.totals());
        cancel.cancel();
        let report = task.await.expect("bot task");
        assert_eq!(report.stop, StopReason::Stopped);
        assert_eq!(*hellos.lock().expect("lock"), [None, Some(vec![42; 16])]);
        let w = stats.take_window();
        assert_eq!((w.counters.resumed, w.counters.disconnects, w.counters.error_total()), (1, 1, 0));
        assert_eq!(w.latencies.summary(Metric::ResumeWelcome).count, 1);
        assert!(w.latencies.summary(Metric::BackInPlace).max < 1000.0);
        assert_eq!(w.counters.misplaced, 0);
    }

    #[tokio::test]
    async fn a_resume_that_puts_the_player_elsewhere_is_counted_misplaced() {
        let (target, _) = fake_shard(vec![Then::Move, Then::StayElsewhere]).await;
        let stats = Arc::new(Stats::new());
        let cancel = CancellationToken::new();
        let task = tokio::spawn(bot(target, stats.clone()).run(cancel.clone()));
        assert!(wait(Duration::from_secs(3), || stats.totals().back_in_place == 1).await, "{:?}", stats.totals());
        cancel.cancel();
        task.await.expect("bot task");
        let w = stats.take_window();
        assert_eq!((w.counters.resumed, w.counters.misplaced), (1, 1), "{:?}", w.counters);
        assert!((stats.max_resume_jump() - 50.0).abs() < 0.5, "jump {}", stats.max_resume_jump());
    }

    #[tokio::test]
    async fn session_replaced_is_never_reconnected() {
        let (target, hellos) = fake_shard(vec![Then::Close(CloseCode::SessionReplaced.0), Then::Stay]).await;
        let stats = Arc::new(Stats::new());
        let task = tokio::spawn(bot(target, stats.clone()).run(CancellationToken::new()));
        let report = tokio::time::timeout(Duration::from_secs(3), task).await.expect("stops by itself").expect("task");
        assert_eq!(report.stop, StopReason::Replaced);
        assert_eq!(report.close_code, Some(CloseCode::SessionReplaced.0));
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(hellos.lock().expect("lock").len(), 1, "no second hello");
        assert_eq!(stats.totals().replaced, 1);
    }

    #[tokio::test]
    async fn going_away_resumes_with_the_welcome_ticket() {
        let (target, hellos) = fake_shard(vec![Then::Close(CloseCode::GoingAway.0), Then::Stay]).await;
        let stats = Arc::new(Stats::new());
        let b = bot(target, stats.clone());
        let shared = b.shared();
        let cancel = CancellationToken::new();
        let task = tokio::spawn(b.run(cancel.clone()));
        assert!(wait(Duration::from_secs(3), || shared.welcomes() == 2).await);
        cancel.cancel();
        let _ = task.await;
        assert_eq!(*hellos.lock().expect("lock"), [None, Some(vec![7; 16])]);
        assert_eq!(stats.totals().resumed, 1);
        assert_eq!(shared.close_code(), Some(CloseCode::GoingAway.0));
    }
}
