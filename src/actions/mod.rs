//! Things that change the world, always on decisions `core` already made, always through
//! `platform::ProcessControl` (which re-checks identity before each signal). The only
//! places headroom execs other programs (`open`, `launchctl`, notifiers), and never on a
//! polling path.

pub mod exec;
pub mod notify;
pub mod recover;
pub mod recover_live;
pub mod steps;
