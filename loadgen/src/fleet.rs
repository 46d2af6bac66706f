//! Bots on several machines: one coordinator (`mino-loadgen --agents N
//! SCENARIO ...`) and N agents (`mino-loadgen agent --coordinator URL`)
//! run one scenario as one test.
//!
//! The protocol, over one websocket per agent (JSON text frames, see
//! [`link`] and [`wire`]):
//! 1. The coordinator listens (`--listen`). Each agent connects and says
//!    `hello` (protocol version, name, host, cores). The coordinator takes
//!    agents until N have joined or `--agents-wait` passes; agents that
//!    never joined are reported as such. Any agent that connects after is
//!    answered `refuse` (the run has its agents) and closed, until the end.
//! 2. It sorts the agents by name and `assign`s agent `k` of `n` its
//!    [`share`] (the bots `i` with `i % n == k`) and the run's plan (targets,
//!    seed, where bots walk); each answers `ready` once its targets resolve.
//! 3. It runs the scenario as one process would, but each step of it
//!    (start a swarm, ramp, settle, converge, hold, ...) is an order given
//!    to every live agent at once; it waits for every answer. A ramp carries
//!    one start time, on the coordinator's clock (converted by each agent's
//!    offset, measured at `assign`), and each agent joins its bots when one
//!    process would have. A hold answers with the agent's windows: its
//!    histograms in HdrHistogram's V2 encoding and its counters
//!    ([`crate::stats::EncodedWindow`]), merged exactly by the coordinator,
//!    bucket for bucket, and its CPU. The coordinator reads `--server-pid`s
//!    and scrapes metrics itself.
//! 4. Every side sends a heartbeat each second; an agent silent for
//!    `--agent-timeout`, whose connection ends, or that misses an order's
//!    deadline is dropped and reported lost (when and why); the others go
//!    on. A coordinator stopped early (Ctrl-C) sends `stop`: the agents end
//!    what they are doing and answer what they measured. At the end it
//!    sends `bye`.
//!
//! No agreement among agents is needed: the coordinator alone decides.

pub mod coordinator;
pub mod link;
pub mod share;
pub mod wire;

pub use coordinator::{Fleet, FleetError, FleetOptions};
pub use share::Share;
