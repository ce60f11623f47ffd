//! ibwire: multi-node GPU training on Slurm + enroot + torchrun, right by construction.
//!
//! Data flows one way: `probe` reads the node into a `Node` snapshot (the only I/O on system
//! files), `plan` decides from it with evidence (pure), and the action modules render or carry
//! out that decision. The layers and where things go: ARCHITECTURE.md.

pub mod arena;
pub mod cmd;
pub mod config;
pub mod enroot;
pub mod input;
pub mod nccl;
pub mod nvsmi;
pub mod parallel;
pub mod plan;
pub mod probe;
pub mod render;
pub mod rendezvous;
pub mod resolve;
pub mod shell;
pub mod slurm;
pub mod snapshot;
pub mod subprocess;
pub mod text;
