//! mino's benchmarks: criterion micro-benchmarks of the hot paths
//! (`benches/benches/`), and the scale runner (`src/bin/scale.rs`): real
//! shards, Redis, nginx and loadgen's bots on this machine, measured from
//! outside and written up in RESULTS.md.
//!
//! Layers, bottom up (declared in the repository's `layers.toml`):
//! - [`machine`], [`section`], [`raw`]: the run's circumstances, its
//!   sections, and the raw results they write, as types.
//! - [`plan`], [`sampler`], [`report`]: what a run measures; samples of the
//!   server side while it runs; RESULTS.md and its charts from the raw
//!   results alone.
//! - [`analysis`], [`runner`]: the server side of each hold, from the
//!   samples; a run's folders, binaries, commands and progress.
//! - [`parts`]: shards and Redis started the test kit's way, a loadgen run
//!   against them with the sampler around it.
//! - [`sections`], [`peer`]: one function a section; the peer (Colyseus)
//!   side by side with mino.
//! - [`cli`]: the command line, and a run from start to report; [`heap`]:
//!   a heap profile of idle websockets (`heap-idle`).

pub mod analysis;
pub mod cli;
pub mod frame_bytes;
pub mod heap;
pub mod machine;
pub mod parts;
pub mod peer;
pub mod plan;
pub mod raw;
pub mod report;
pub mod runner;
pub mod sampler;
pub mod section;
pub mod sections;
