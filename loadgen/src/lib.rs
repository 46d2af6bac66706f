//! mino's bot swarm: bots that speak the real protocol (the same bytes as the
//! browser client, through `mino-protocol`), and the load-test scenarios built
//! on them.
//!
//! Layers, bottom up (declared in the repository's `layers.toml`, checked by
//! `scripts/layers.py`):
//! - [`target`], [`connection`], [`tls`]: where to connect and how (source
//!   address binding, Nagle off, TLS for `wss://`, failure classification in
//!   [`failure`]); [`transport`]: a websocket or WebTransport, and how a run
//!   splits its bots between them; [`webtransport`]: a WebTransport session
//!   (the shard's offer, the stream, datagrams).
//! - [`client`]: one player's connection (Hello, Welcome/Busy/Error, send,
//!   receive verified frames); [`event`] turns frames into owned values for tests.
//! - [`world`]: what a Welcome says about the world (bounds, speed, the
//!   area-of-interest grid); [`region`] and [`steer`]: where a bot walks
//!   (anywhere, a `--density` square, or a crowd's point).
//! - [`cells`]: what every bot measures of its cells (own-cell and
//!   neighbour gaps, bytes); [`observer`]: what a sample of bots measures of
//!   the players in view (view-enter latency, pop-ins, blinks, the ideal
//!   crop), from the shared table of every bot's position ([`positions`]);
//!   [`reader`]: what a bot holds of its cells and the walk over the cells
//!   a view frame updated, which both measure.
//! - [`bot`]: a simulated player that walks per its [`profile`], measures in a
//!   [`session`], and reconnects/resumes per the [`reconnect`] policy; its
//!   [`status`] is readable while it runs.
//! - [`swarm`]: many bots at a paced rate, on [`threads`] (one single-threaded
//!   runtime each); [`stats`] merges what they measure.
//! - [`cli`]: the `mino-loadgen` command line, which the scenarios run with.
//! - [`fleet`]: a run spread over agents on several machines under one
//!   coordinator (the protocol, the bots' shares, the coordinator's side).
//! - [`scenario`]: walk, steps, idle, arrivals, failover and crowd runs,
//!   reported by [`report`] (JSON and tables) and [`plot`] (SVG), with
//!   [`meter`], [`sysinfo`] and [`limits`] for CPU, memory and local limits,
//!   and [`scrape`] for the shards' own metrics; [`interrupt`] says whether
//!   a run was cut short, [`outcome`] how it ended (its verdict and exit
//!   code, and what each scenario expects of its holds).

pub mod bot;
pub mod cells;
pub mod cli;
pub mod client;
pub mod connection;
pub mod event;
pub mod failure;
pub mod fleet;
pub mod freeze;
pub mod interrupt;
pub mod limits;
pub mod meter;
pub mod observer;
pub mod outcome;
pub mod parts;
pub mod plot;
pub mod positions;
pub mod profile;
pub mod progress;
pub mod reader;
pub mod reconnect;
pub mod region;
pub mod report;
pub mod scenario;
pub mod scrape;
pub mod session;
pub mod silence;
pub mod stamped;
pub mod stats;
pub mod status;
pub mod steer;
pub mod swarm;
pub mod sysinfo;
pub mod target;
pub mod threads;
pub mod tls;
pub mod transport;
pub mod webtransport;
pub mod world;

pub use bot::{Bot, BotConfig, BotReport};
pub use client::{Client, JoinError, JoinRequest};
pub use event::{ServerEvent, SnapshotFrame, Welcomed};
pub use profile::{Profile, ProfileName};
pub use reconnect::ReconnectPolicy;
pub use stats::{Metric, Stats, Summary};
pub use status::{BotShared, BotState};
pub use target::Target;
pub use tls::{Tls, TlsOptions};
pub use transport::{Transport, Transports};
