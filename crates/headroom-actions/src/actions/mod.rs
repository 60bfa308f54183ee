//! Things that change the world, always on decisions `core` already made, always through
//! `platform::ProcessControl` (which re-checks identity before each signal). The only
//! places headroom execs other programs (`open`, `launchctl`, `systemctl`, notifiers), and
//! never on a polling path.

pub mod cleanup;
pub mod clock;
pub mod escalate;
pub(crate) mod exec;
pub mod hang_round;
pub mod login_item;
pub mod memory_guard;
pub mod notify;
pub mod park;
pub mod reap_report;
pub(crate) mod reap_verify;
pub mod recover;
pub mod session_assessment;
pub mod terminate;
// The commands' tests (another crate) share it: compiled for this crate's tests and the
// `fixtures` feature, which only the dev-dependencies above ask for.
#[cfg(any(test, feature = "fixtures"))]
pub mod test_double;
#[cfg(unix)]
pub mod watchdog;
