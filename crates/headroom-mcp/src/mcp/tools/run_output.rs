//! What `run_limited` reads from `headroom run`: the bounded tails of the command's stdout
//! and stderr, byte for byte, and `run`'s own records from the descriptor of their own.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::sync::{Arc, Mutex, mpsc};

use serde::Deserialize;
use serde_json::Value;

/// A record line longer than this is not one of `run`'s.
const MAX_RECORD_LINE: usize = 64 << 10;

/// The last `max` bytes of a stream, and how many there were.
#[derive(Debug, Default)]
pub(super) struct Tail {
    buf: VecDeque<u8>,
    pub(super) total: u64,
    max: usize,
}

impl Tail {
    pub(super) fn new(max: usize) -> Self {
        Self {
            max,
            ..Self::default()
        }
    }

    pub(super) fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let keep = &bytes[bytes.len().saturating_sub(self.max)..];
        self.buf.extend(keep);
        let over = self.buf.len().saturating_sub(self.max);
        self.buf.drain(..over);
    }

    pub(super) fn text(&self) -> String {
        let (a, b) = self.buf.as_slices();
        String::from_utf8_lossy(&[a, b].concat()).into_owned()
    }
}

/// The records the server reads, typed: the summary's outcome and an error document.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Record {
    Summary(RunEnding),
    Error {
        error: String,
    },
    #[serde(other)]
    Other,
}

/// What the MCP result needs of `run`'s summary record: how it ended and its peak.
#[derive(Debug, Deserialize)]
pub(super) struct RunEnding {
    pub(super) ended_by: Option<String>,
    pub(super) peak_footprint_bytes: u64,
}

#[derive(Debug, Default)]
pub(super) struct Records {
    pub(super) summary: Option<(Value, RunEnding)>,
    pub(super) error: Option<String>,
}

/// Read `run`'s records until the pipe closes.
pub(super) fn read_records(r: impl Read) -> Records {
    let mut out = Records::default();
    let mut r = BufReader::new(r);
    let mut line = Vec::new();
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return out,
            Ok(_) => {}
        }
        if line.len() > MAX_RECORD_LINE {
            continue;
        }
        match serde_json::from_slice::<Record>(&line) {
            Ok(Record::Summary(o)) => {
                if let Ok(v) = serde_json::from_slice::<Value>(&line) {
                    out.summary = Some((v, o));
                }
            }
            Ok(Record::Error { error }) => out.error = Some(error),
            Ok(Record::Other) | Err(_) => {}
        }
    }
}

/// A stream's tail, readable while it is being read (a task's status) and once it ended.
pub(super) type SharedTail = Arc<Mutex<Tail>>;

/// Read `r` into a shared tail; the receiver says when the stream ended.
pub(super) fn tail_thread(
    r: Option<impl Read + Send + 'static>,
    tail: SharedTail,
) -> mpsc::Receiver<()> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut r) = r {
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = r.read(&mut buf) {
                if n == 0 {
                    break;
                }
                lock(&tail).push(&buf[..n]);
            }
            let _ = tx.send(());
        });
    }
    rx
}

/// Nothing panics while holding a tail; were one poisoned, its bytes are still whole.
pub(super) fn lock(t: &Mutex<Tail>) -> std::sync::MutexGuard<'_, Tail> {
    t.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(unix)]
pub(super) fn exit_code_of(s: std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    s.code().or_else(|| s.signal().map(|n| 128 + n))
}

#[cfg(not(unix))]
pub(super) fn exit_code_of(s: std::process::ExitStatus) -> Option<i32> {
    s.code()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_bytes_and_counts_all() {
        let mut t = Tail::new(4);
        t.push(b"abc");
        t.push(b"defgh");
        assert_eq!((t.text().as_str(), t.total), ("efgh", 8));
        t.push(b"0123456789");
        assert_eq!((t.text().as_str(), t.total), ("6789", 18));
    }

    #[test]
    fn the_records_pipe_is_read_typed_and_anything_else_on_it_is_skipped() {
        let text = b"{\"schema\":\"headroom.run/1\",\"type\":\"start\",\"pid\":1}\n\
not json\n\
{\"schema\":\"headroom.run/1\",\"type\":\"summary\",\"ended_by\":\"limit\",\"peak_footprint_bytes\":7,\"exit_code\":143}\n";
        let r = read_records(&text[..]);
        let (v, o) = r.summary.unwrap();
        assert_eq!(
            (o.ended_by.as_deref(), o.peak_footprint_bytes),
            (Some("limit"), 7)
        );
        assert_eq!(v["exit_code"], 143);
        let r = read_records(&b"{\"type\":\"error\",\"error\":\"`x`: command not found\"}\n"[..]);
        assert!(r.summary.is_none());
        assert_eq!(r.error.as_deref(), Some("`x`: command not found"));
    }
}
