//! TEMPORARY (uncommitted): replaced by the session-log reader from feat/logs.
use std::path::Path;
#[derive(Debug, Default, Clone)]
pub struct ReaderLimits;
#[derive(Debug)]
pub struct DirReport {
    pub last_activity: Option<i64>,
}
pub fn judge_dir(_dir: &Path, _now: i64, _l: &ReaderLimits) -> Result<DirReport, String> {
    Ok(DirReport {
        last_activity: None,
    })
}
