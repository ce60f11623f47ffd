//! The integration tests, one binary (a binary per file linked the whole crate once each: most
//! of a test build on a 2-core machine). `cargo test --test it <module>` runs one module.

mod cdi;
mod common;
mod doctor;
mod env_decisions;
mod faults;
mod fleet;
mod hook_contract;
mod hostile;
mod layers;
mod open_budget;
mod probe_cli;
mod properties;
mod readme_try_it;
mod taskprolog;
mod topo_fixtures;
mod verify_corpus;
mod verify_fixtures;
mod watch;
