//! A stream written by a thread of its own through a bounded queue (`watch`'s stdout, and
//! the Printer's stderr while `watch` runs), so the rounds never wait for a reader: a pipe nobody reads (the consumer hung, `watch | less` left in
//! the background) fills up and blocks its writer, and a guard that blocked with it would
//! stop guarding. When the queue is full the line is dropped and counted, and once the
//! queue takes lines again a notice says how many were lost. A closed pipe (EPIPE) ends
//! the guard cleanly, as `probe | head -1` does.
//!
//! Where no thread can be started (at the fork wall: threads count against RLIMIT_NPROC)
//! lines are written directly, as before.
//!
//! stderr goes the same way while `watch` runs (`Output::stderr`, installed by
//! `output::queue_stderr`): a warning from a round (a lock refused, a state file set aside)
//! must not wait for a stderr nobody reads either. In a JSON Lines stream the notice of
//! lost lines is the stream's own kind of line, which its owner writes (`JsonNotice`).

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};
use std::time::{Duration, Instant};

/// Lines waiting for a slow reader: about 20 minutes of 1 s rounds, well under a megabyte.
pub(crate) const QUEUE_LINES: usize = 1024;
/// At exit, how long the last lines (the summary) may wait for a reader.
pub const DRAIN_AT_EXIT: Duration = Duration::from_secs(2);

type Sink = Box<dyn Write + Send>;

/// fd 1 or 2 written with write(2) directly, not through std's `Stdout`/`Stderr`: their
/// lock would be held by a writer blocked on a full pipe, and the exit path's flush (or a
/// panic message) would wait for it.
struct RawFd(i32);

impl Write for RawFd {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        crate::platform::stdio::write_unlocked(self.0, buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[derive(Debug)]
enum WriteMode {
    Queued {
        tx: Option<SyncSender<String>>,
        done: Option<std::thread::JoinHandle<()>>,
    },
    /// No writer thread could be started.
    Direct,
}

/// The JSON Lines notice (with its newline) that says `message`, in the stream's own kind of
/// line (`watch`: a `notice` event).
pub type JsonNotice = fn(message: String) -> String;

pub struct Output {
    mode: WriteMode,
    direct: Option<Sink>,
    closed: Arc<AtomicBool>,
    dropped: u64,
    /// Lines dropped in all.
    lost: u64,
    /// Whether the stream is JSON Lines, and how its dropped-lines notice is written.
    json: Option<JsonNotice>,
    /// Which stream, for the dropped-lines notice.
    stream: Stream,
}

/// The stream an `Output` writes: the notice of lost lines names it, and on stderr (plain
/// text there) it is a `headroom: warning:` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    fn name(self) -> &'static str {
        match self {
            Self::Stdout => "stdout",
            Self::Stderr => "stderr",
        }
    }
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Output")
            .field("mode", &self.mode)
            .field("dropped", &self.dropped)
            .finish_non_exhaustive()
    }
}

fn is_closed(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::BrokenPipe
}

impl Output {
    /// Lines to stdout: JSON Lines when `json` says how their notice is written.
    pub fn stdout(json: Option<JsonNotice>) -> Self {
        let mut o = Self::new(Box::new(RawFd(1)), QUEUE_LINES);
        o.json = json;
        o
    }

    /// Diagnostic lines to stderr (plain-text notices); a closed stderr only discards them.
    pub(crate) fn stderr() -> Self {
        let mut o = Self::with_fallback(Box::new(RawFd(2)), QUEUE_LINES, 2);
        o.json = None;
        o.stream = Stream::Stderr;
        o
    }

    /// Lines to `sink` through a queue of `capacity` (plain-text notices).
    pub(crate) fn new(sink: Sink, capacity: usize) -> Self {
        Self::with_fallback(sink, capacity, 1)
    }

    /// As `new`, writing to `fd` directly when no thread can be started.
    fn with_fallback(sink: Sink, capacity: usize, fd: i32) -> Self {
        let closed = Arc::new(AtomicBool::new(false));
        let (tx, rx) = sync_channel::<String>(capacity.max(1));
        let flag = closed.clone();
        let mut out = sink;
        let spawned = std::thread::Builder::new()
            .name("watch-output".into())
            .spawn(move || {
                for line in rx {
                    let res = out.write_all(line.as_bytes()).and_then(|()| out.flush());
                    if let Err(e) = res {
                        if is_closed(&e) {
                            flag.store(true, Ordering::SeqCst);
                            return;
                        }
                    }
                }
            });
        match spawned {
            Ok(done) => Self {
                mode: WriteMode::Queued {
                    tx: Some(tx),
                    done: Some(done),
                },
                direct: None,
                closed,
                dropped: 0,
                lost: 0,
                json: None,
                stream: Stream::Stdout,
            },
            // The closure (and the sink in it) is gone with the failed spawn: write to
            // the descriptor directly.
            Err(_) => Self {
                mode: WriteMode::Direct,
                direct: Some(Box::new(RawFd(fd))),
                closed,
                dropped: 0,
                lost: 0,
                json: None,
                stream: Stream::Stdout,
            },
        }
    }

    /// Queue `line` (with its newline); dropped and counted when the reader is behind.
    pub fn send(&mut self, line: String) {
        if self.closed() {
            return;
        }
        match &mut self.mode {
            WriteMode::Direct => {
                if let Some(out) = self.direct.as_mut() {
                    if let Err(e) = out.write_all(line.as_bytes()).and_then(|()| out.flush()) {
                        if is_closed(&e) {
                            self.closed.store(true, Ordering::SeqCst);
                        }
                    }
                }
            }
            WriteMode::Queued { tx: Some(tx), .. } => {
                if self.dropped > 0 {
                    let notice = dropped_notice(self.dropped, self.json, self.stream);
                    match tx.try_send(notice) {
                        Ok(()) => self.dropped = 0,
                        Err(_) => {
                            self.drop_one();
                            return;
                        }
                    }
                }
                match tx.try_send(line) {
                    Ok(()) => {}
                    Err(TrySendError::Full(_)) => self.drop_one(),
                    Err(TrySendError::Disconnected(_)) => {
                        self.closed.store(true, Ordering::SeqCst);
                    }
                }
            }
            WriteMode::Queued { tx: None, .. } => {}
        }
    }
}

/// The notice that `n` lines were lost: the stream's own line in JSON Lines, else text.
fn dropped_notice(n: u64, json: Option<JsonNotice>, stream: Stream) -> String {
    let message = format!(
        "{} dropped: {} was not being read",
        crate::output::plural_verb(n, "line", "was", "were"),
        stream.name()
    );
    match json {
        Some(notice) => notice(message),
        None if stream == Stream::Stderr => format!("headroom: warning: {message}\n"),
        None => format!("\nwarning: {message}\n"),
    }
}

impl Output {
    /// Lines dropped since the last notice about it.
    #[cfg(test)]
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Lines dropped in all.
    pub(crate) fn lost(&self) -> u64 {
        self.lost
    }

    fn drop_one(&mut self) {
        self.dropped += 1;
        self.lost += 1;
    }

    /// The reader closed the pipe.
    pub fn closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Let the queued lines go out, waiting at most `wait` for a reader that is not there.
    pub fn finish(&mut self, wait: Duration) {
        if let WriteMode::Queued { tx, done } = &mut self.mode {
            drop(tx.take());
            let deadline = Instant::now() + wait;
            if let Some(h) = done.take() {
                while !h.is_finished() && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(5));
                }
                if h.is_finished() {
                    let _ = h.join();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::{Receiver, channel};

    /// A reader that reads nothing until told to: every write says it started, then blocks.
    struct Stuck(
        Receiver<()>,
        std::sync::mpsc::Sender<String>,
        std::sync::mpsc::Sender<()>,
    );

    impl Write for Stuck {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let _ = self.2.send(());
            let _ = self.0.recv();
            let _ = self.1.send(String::from_utf8_lossy(buf).into_owned());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_stuck_reader_never_blocks_a_round_and_the_loss_is_told() {
        let (unstick, gate) = channel();
        let (tx, got) = channel();
        let (entered_tx, entered) = channel();
        let mut out = Output::new(Box::new(Stuck(gate, tx, entered_tx)), 2);
        let started = Instant::now();
        out.send("line 0\n".into());
        entered.recv().unwrap();
        for i in 1..50 {
            out.send(format!("line {i}\n"));
        }
        // One line in the writer's hands, two queued, the rest dropped; nothing waited.
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(out.dropped(), 47);
        for _ in 0..10 {
            let _ = unstick.send(());
        }
        let first: Vec<String> = (0..3).map(|_| got.recv().unwrap()).collect();
        assert_eq!(first, ["line 0\n", "line 1\n", "line 2\n"]);
        out.send("line 50\n".into());
        assert_eq!(out.dropped(), 0);
        let notice = got.recv().unwrap();
        assert!(notice.contains("47 lines were dropped"), "{notice}");
        assert_eq!(got.recv().unwrap(), "line 50\n");
        drop(unstick);
        out.finish(Duration::from_secs(1));
    }

    #[test]
    fn the_loss_is_told_on_the_stream_that_lost_it() {
        let n = dropped_notice(3, None, Stream::Stderr);
        assert_eq!(
            n,
            "headroom: warning: 3 lines were dropped: stderr was not being read\n"
        );
        let json = |m: String| format!("{{\"message\":\"{m}\"}}\n");
        assert_eq!(
            dropped_notice(3, Some(json), Stream::Stdout),
            "{\"message\":\"3 lines were dropped: stdout was not being read\"}\n"
        );
    }

    struct Closed;

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_is_seen() {
        let mut out = Output::new(Box::new(Closed), 4);
        out.send("x\n".into());
        let deadline = Instant::now() + Duration::from_secs(10);
        while !out.closed() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(out.closed());
        out.finish(Duration::from_secs(1));
    }
}
