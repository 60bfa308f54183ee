//! Things that change the world, always on decisions `core` already made, always through
//! `platform::ProcessControl` (which re-checks identity before each signal). The only
//! places headroom execs other programs (`open`, `launchctl`, `systemctl`, notifiers), and
//! never on a polling path.

pub(crate) mod cleanup;
pub(crate) mod clock;
pub(crate) mod escalate;
pub(crate) mod exec;
pub(crate) mod hang_round;
pub(crate) mod login_item;
pub(crate) mod memory_guard;
pub(crate) mod notify;
pub(crate) mod park;
pub(crate) mod reap_report;
pub(crate) mod reap_verify;
pub(crate) mod recover;
pub(crate) mod session_assessment;
pub(crate) mod terminate;
#[cfg(test)]
pub(crate) mod test_double;
#[cfg(unix)]
pub(crate) mod watchdog;
