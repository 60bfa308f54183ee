//! Things that change the world, always through decisions made in `core` and signals sent
//! through `platform::ProcessControl` (which re-checks each target's identity first).

pub mod park;
#[cfg(unix)]
pub mod watchdog;
