//! Things that change the world, always on decisions `core` already made, always through
//! `platform::ProcessControl` (which re-checks identity before each signal).

pub mod login_item;
pub mod notify;
pub mod terminate;
