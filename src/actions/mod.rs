//! Things that change the world, always on decisions `core` already made, always through
//! `platform::ProcessControl` (which re-checks identity before each signal). The only
//! places headroom execs other programs (`open`, `launchctl`, `systemctl`, notifiers), and
//! never on a polling path.

pub mod clock;
pub mod escalate;
pub mod exec;
pub mod login_item;
pub mod memory_guard;
pub mod notify;
pub mod park;
pub mod recover;
pub mod terminate;
#[cfg(test)]
pub(crate) mod test_double;
#[cfg(unix)]
pub mod watchdog;
