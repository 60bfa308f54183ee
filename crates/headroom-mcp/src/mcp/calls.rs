//! The calls in flight: each `tools/call` runs on a thread of its own, at most
//! `MAX_RUNNING` at once (more wait for a turn, at most `MAX_WAITING`), so the reading
//! thread answers `ping` and everything else at once. `notifications/cancelled` marks a
//! call cancelled and runs what the tool registered to stop it (`run_limited`: end the
//! run's tree); a cancelled call is never answered. A call whose request carried a
//! `progressToken` gets `notifications/progress` once a second while it runs.
//! When the session ends (stdin closed, SIGTERM), `end_all` cancels every call and waits,
//! bounded, for them to end.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::output::Printer;

/// Calls that run at once ...
pub(crate) const MAX_RUNNING: usize = 8;
/// ... and that may wait for a turn; past that a call is answered "busy" at once.
pub(crate) const MAX_WAITING: usize = 64;
/// Between two progress notifications of one call.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while holding these; were one poisoned, its data is still whole.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Where every message to the client goes: whole lines on stdout, from any thread. A
/// failed write (the client closed its end) is remembered: the server then stops, exit 2.
#[derive(Debug)]
pub(crate) struct Outbox {
    printer: Printer,
    failed: Mutex<Option<String>>,
}

impl Outbox {
    pub(crate) fn new(printer: Printer) -> Self {
        Self {
            printer,
            failed: Mutex::new(None),
        }
    }

    pub(crate) fn send(&self, msg: &Value) {
        if let Err(e) = self.printer.json_protocol(msg) {
            lock(&self.failed).get_or_insert_with(|| e.to_string());
        }
    }

    /// Why stdout could not be written, once it could not.
    pub(crate) fn failure(&self) -> Option<String> {
        lock(&self.failed).clone()
    }
}

/// One call in flight, as its tool sees it.
pub(crate) struct Call {
    cancelled: AtomicBool,
    /// What the tool says it is doing, for the progress notifications.
    status: Mutex<String>,
    done: Mutex<bool>,
    done_cv: Condvar,
}

impl std::fmt::Debug for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Call")
            .field("cancelled", &self.cancelled)
            .finish_non_exhaustive()
    }
}

impl Call {
    pub(crate) fn new() -> Self {
        Self {
            cancelled: AtomicBool::new(false),
            status: Mutex::new(String::new()),
            done: Mutex::new(false),
            done_cv: Condvar::new(),
        }
    }

    pub(crate) fn cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// What the call is doing now (said in its progress notifications).
    pub(crate) fn set_status(&self, s: String) {
        *lock(&self.status) = s;
    }

    pub(crate) fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
    }

    fn finish(&self) {
        *lock(&self.done) = true;
        self.done_cv.notify_all();
    }

    /// Wait up to `d` for the call to finish; whether it has.
    fn wait_done(&self, d: Duration) -> bool {
        let g = lock(&self.done);
        let (g, _) = self
            .done_cv
            .wait_timeout_while(g, d, |done| !*done)
            .unwrap_or_else(PoisonError::into_inner);
        *g
    }
}

impl Default for Call {
    fn default() -> Self {
        Self::new()
    }
}

/// What a call's thread does with its result.
pub(crate) type Reply = Box<dyn FnOnce(Value) + Send>;
pub(crate) type Work = Box<dyn FnOnce(&Call) -> Value + Send>;

#[derive(Default)]
struct InFlight {
    /// By the request id's JSON text.
    calls: HashMap<String, Arc<Call>>,
    running: usize,
    ending: bool,
}

/// Every call in flight.
#[derive(Default)]
pub(crate) struct Calls {
    state: Mutex<InFlight>,
    turn: Condvar,
    threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
}

impl std::fmt::Debug for Calls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Calls").finish_non_exhaustive()
    }
}

impl Calls {
    /// Run `work` for the request `id` on a thread of its own, `reply` with its result
    /// unless it was cancelled. Err (at once, nothing started, `reply` handed back) when
    /// too many wait or the session is ending, or when `id` is already in flight.
    pub(crate) fn start(
        self: &Arc<Self>,
        id: &Value,
        progress: Option<(Value, Arc<Outbox>)>,
        work: Work,
        reply: Reply,
    ) -> Result<(), (String, Reply)> {
        let key = id.to_string();
        let call = Arc::new(Call::new());
        {
            let mut st = lock(&self.state);
            if st.ending {
                return Err(("the session is ending".into(), reply));
            }
            if st.calls.contains_key(&key) {
                return Err((format!("request id {key} is already in flight"), reply));
            }
            if st.calls.len() >= MAX_RUNNING + MAX_WAITING {
                return Err((
                    format!(
                        "busy: {MAX_RUNNING} calls are running and {MAX_WAITING} waiting; \
                         try again when one ends"
                    ),
                    reply,
                ));
            }
            st.calls.insert(key.clone(), Arc::clone(&call));
        }
        let me = Arc::clone(self);
        // The reply comes back if the thread cannot be made.
        let slot = Arc::new(Mutex::new(Some(reply)));
        let theirs = Arc::clone(&slot);
        let handle = std::thread::Builder::new()
            .name("mcp-call".into())
            .spawn(move || {
                if let Some(reply) = lock(&theirs).take() {
                    me.run_call(&key, &call, progress, work, reply);
                }
            });
        match handle {
            Ok(h) => {
                let mut threads = lock(&self.threads);
                threads.retain(|t| !t.is_finished());
                threads.push(h);
                Ok(())
            }
            Err(e) => {
                lock(&self.state).calls.remove(&id.to_string());
                let reply = lock(&slot).take();
                match reply {
                    Some(r) => Err((format!("cannot start a thread for the call: {e}"), r)),
                    None => Ok(()),
                }
            }
        }
    }

    fn run_call(
        &self,
        key: &str,
        call: &Arc<Call>,
        progress: Option<(Value, Arc<Outbox>)>,
        work: Work,
        reply: Reply,
    ) {
        // Wait for a turn (or the cancellation that makes it moot).
        {
            let mut st = lock(&self.state);
            while st.running >= MAX_RUNNING && !call.cancelled() && !st.ending {
                st = self
                    .turn
                    .wait_timeout(st, Duration::from_millis(200))
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            st.running += 1;
        }
        let result = if call.cancelled() {
            None
        } else {
            std::thread::scope(|scope| {
                if let Some((token, out)) = &progress {
                    scope.spawn(|| tick_progress(call, token, out));
                }
                let r = work(call);
                call.finish();
                Some(r)
            })
        };
        call.finish();
        {
            let mut st = lock(&self.state);
            st.running -= 1;
            st.calls.remove(key);
        }
        self.turn.notify_all();
        if let Some(r) = result.filter(|_| !call.cancelled()) {
            reply(r);
        }
    }

    /// `notifications/cancelled` for `id`: whether it named a call in flight.
    pub(crate) fn cancel(&self, id: &Value) -> bool {
        let call = lock(&self.state).calls.get(&id.to_string()).cloned();
        match call {
            Some(c) => {
                c.cancel();
                self.turn.notify_all();
                true
            }
            None => false,
        }
    }

    /// The session ends: refuse new calls, cancel every one in flight and wait for their
    /// threads, at most `bound` in all.
    pub(crate) fn end_all(&self, bound: Duration) {
        let calls: Vec<Arc<Call>> = {
            let mut st = lock(&self.state);
            st.ending = true;
            st.calls.values().cloned().collect()
        };
        for c in &calls {
            c.cancel();
        }
        self.turn.notify_all();
        let deadline = Instant::now() + bound;
        let threads: Vec<_> = lock(&self.threads).drain(..).collect();
        for t in threads {
            while !t.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            if t.is_finished() {
                let _ = t.join();
            }
        }
    }
}

/// `notifications/progress` every `PROGRESS_EVERY` until the call is done: the seconds it
/// has run (always increasing) and what it says it is doing.
fn tick_progress(call: &Call, token: &Value, out: &Outbox) {
    let started = Instant::now();
    while !call.wait_done(PROGRESS_EVERY) {
        if call.cancelled() {
            return;
        }
        let secs = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
        let status = lock(&call.status).clone();
        let mut params = json!({"progressToken": token, "progress": secs});
        params["message"] = if status.is_empty() {
            json!(format!("running for {secs} s"))
        } else {
            json!(format!("running for {secs} s: {status}"))
        };
        out.send(&json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": params}));
    }
}
