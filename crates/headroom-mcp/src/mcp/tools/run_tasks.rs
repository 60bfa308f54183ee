//! Long commands as tasks: `run_start` starts what `run_limited` would (the same arguments,
//! refusals, `[mcp] run_allow` and `run` group) and answers at once with a task id;
//! `run_status` says how it goes (running or ended, its exit, the tails of its output, its
//! peak footprint once ended), `run_terminate` ends its tree (the same escalation as a
//! cancelled `run_limited`: SIGTERM to `run`, which ends its tree, SIGKILL only to `run`
//! and only past two graces), `run_list` lists them. An agent can run a long capped build
//! without holding one request open. Every task ends with the session, as a call does
//! (`Server::end`), and each `run` also ends its tree if the server dies.
//! At most `MAX_RUNNING` run at once; at most `MAX_KEPT` are kept, the oldest ended first
//! to go.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::run_limited::{self, Live, RunLimitedArgs, RunLimitedReport};
use super::{Effect, Spec, Tools, report_of, schema_of};
use crate::config::ToolGroup;
use crate::mcp::args::NoArgs;
use crate::mcp::calls::Call;
use crate::mcp::results;

/// Tasks running at once ...
pub(crate) const MAX_RUNNING: usize = 8;
/// ... and kept, running or ended.
pub(crate) const MAX_KEPT: usize = 32;
/// The longest `run_terminate` waits for the tree to end before it answers (running).
const TERMINATE_WAIT: Duration = Duration::from_secs(30);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One task.
struct Task {
    id: String,
    command: Vec<String>,
    started: Instant,
    call: Call,
    live: Live,
    /// Its report once it ended, or the tool error that ended it.
    ended: Mutex<Option<Result<RunLimitedReport, Value>>>,
}

/// Every task of the session.
#[derive(Default)]
pub(crate) struct Tasks {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    next: u64,
    tasks: Vec<Arc<Task>>,
    threads: Vec<std::thread::JoinHandle<()>>,
    ending: bool,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks").finish_non_exhaustive()
    }
}

/// What `run_status`, `run_start`, `run_terminate` return for one task.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct TaskReport {
    pub task_id: String,
    pub command: Vec<String>,
    /// `running`, or `ended` (by itself, its limit, its timeout, or `run_terminate`).
    pub state: String,
    /// `headroom run`'s pid (the tree's root above the command); null before it started.
    pub pid: Option<i32>,
    pub duration_ms: u64,
    /// The end of its stdout and stderr so far, byte for byte.
    pub stdout_tail: String,
    pub stderr_tail: String,
    /// Once ended: the exit code (143/137 when headroom ended it), null if `run` was killed.
    pub exit_code: Option<i32>,
    /// Once ended: the tree's peak footprint, as `run` measured it.
    pub peak_footprint_bytes: Option<u64>,
    /// Once ended: the whole `run_limited` report.
    pub result: Option<RunLimitedReport>,
    /// Once ended without a report: why (the command could not be started, say).
    pub error: Option<String>,
}

impl crate::schema::Document for TaskReport {
    const SCHEMA: &'static str = "headroom.run-task/1";
    const TYPE: Option<&'static str> = Some("run-task");
}

impl crate::schema::Document for TaskList {
    const SCHEMA: &'static str = "headroom.run-tasks/1";
    const TYPE: Option<&'static str> = Some("run-tasks");
}

/// `run_list`'s report.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct TaskList {
    pub tasks: Vec<TaskReport>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TaskArgs {
    /// The id `run_start` returned.
    pub task_id: String,
}

impl Task {
    fn report(&self) -> TaskReport {
        let (stdout_tail, stderr_tail) = self.live.tails();
        let mut r = TaskReport {
            task_id: self.id.clone(),
            command: self.command.clone(),
            state: "running".into(),
            pid: self.live.pid(),
            duration_ms: u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            stdout_tail,
            stderr_tail,
            exit_code: None,
            peak_footprint_bytes: None,
            result: None,
            error: None,
        };
        match &*lock(&self.ended) {
            None => {}
            Some(Ok(rep)) => {
                r.state = "ended".into();
                r.duration_ms = rep.duration_ms;
                r.stdout_tail.clone_from(&rep.stdout_tail);
                r.stderr_tail.clone_from(&rep.stderr_tail);
                r.exit_code = rep.exit_code;
                r.peak_footprint_bytes = rep.peak_footprint_bytes;
                r.result = Some(rep.clone());
            }
            Some(Err(e)) => {
                r.state = "ended".into();
                r.error = Some(results::text_of(e));
            }
        }
        r
    }

    fn running(&self) -> bool {
        lock(&self.ended).is_none()
    }
}

impl Tasks {
    /// Start `plan` as a task; Err is the tool error (too many running, the session ending).
    fn start(self: &Arc<Self>, tools: &Tools, plan: run_limited::Plan) -> Result<Arc<Task>, Value> {
        let mut inner = lock(&self.inner);
        if inner.ending {
            return Err(results::usage("the session is ending; no task is started"));
        }
        if inner.tasks.iter().filter(|t| t.running()).count() >= MAX_RUNNING {
            return Err(results::usage(&format!(
                "{MAX_RUNNING} tasks are running; end one (run_terminate) or wait"
            )));
        }
        while inner.tasks.len() >= MAX_KEPT {
            match inner.tasks.iter().position(|t| !t.running()) {
                Some(i) => drop(inner.tasks.remove(i)),
                None => break,
            }
        }
        inner.next += 1;
        let task = Arc::new(Task {
            id: format!("task-{}", inner.next),
            command: plan.command.clone(),
            started: Instant::now(),
            call: Call::new(),
            live: Live::default(),
            ended: Mutex::new(None),
        });
        let mine = Arc::clone(&task);
        let tools = tools.clone();
        let spawned = std::thread::Builder::new()
            .name("mcp-task".into())
            .spawn(move || {
                let ended = run_limited::run(&tools, &mine.call, plan, &mine.live);
                *lock(&mine.ended) = Some(ended.map(|(rep, _, _)| rep));
            });
        match spawned {
            Ok(h) => {
                inner.threads.retain(|t| !t.is_finished());
                inner.threads.push(h);
                inner.tasks.push(Arc::clone(&task));
                Ok(task)
            }
            Err(e) => Err(results::error(&anyhow::anyhow!(
                "cannot start a thread for the task: {e}"
            ))),
        }
    }

    fn find(&self, id: &str) -> Result<Arc<Task>, Value> {
        let inner = lock(&self.inner);
        inner
            .tasks
            .iter()
            .find(|t| t.id == id)
            .cloned()
            .ok_or_else(|| {
                let known: Vec<&str> = inner.tasks.iter().map(|t| t.id.as_str()).collect();
                results::usage(&format!(
                    "no task `{id}` in this session (the tasks are: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ))
            })
    }

    /// The session ends: no new task; every running one is ended (its tree) and waited
    /// for, at most until `deadline`.
    pub(crate) fn end_all(&self, deadline: Instant) {
        let (tasks, threads) = {
            let mut inner = lock(&self.inner);
            inner.ending = true;
            (inner.tasks.clone(), std::mem::take(&mut inner.threads))
        };
        for t in &tasks {
            t.call.cancel();
        }
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

fn report_value<T: crate::schema::Document>(r: &T, text: String) -> Value {
    match crate::schema::to_value(r) {
        Ok(v) => results::with_report(v, text, false),
        Err(e) => results::error(&anyhow::anyhow!("cannot serialize the report: {e}")),
    }
}

fn line(r: &TaskReport) -> String {
    match (r.state.as_str(), r.exit_code) {
        ("running", _) => format!(
            "{} running for {} s (pid {})",
            r.task_id,
            r.duration_ms / 1000,
            r.pid.map_or("?".into(), |p| p.to_string())
        ),
        (_, Some(c)) => format!("{} ended: exit {c}", r.task_id),
        (_, None) => format!(
            "{} ended: {}",
            r.task_id,
            r.error.as_deref().unwrap_or("`headroom run` was killed")
        ),
    }
}

fn task_schema() -> Value {
    report_of::<TaskReport>()
}

fn list_schema() -> Value {
    report_of::<TaskList>()
}

pub(crate) const START: Spec = Spec {
    name: "run_start",
    title: "Start a long command under a memory limit",
    description: "run_limited as a task: the same arguments, limits, timeout and refusals, \
but it answers at once with a task_id; poll run_status for its state and output, end it \
with run_terminate, list them with run_list. It runs any program the user could, with the \
user's rights (only those of `[mcp] run_allow` when that is set). Every task ends with the \
session.",
    group: ToolGroup::Run,
    effect: Effect::Acts {
        destructive: true,
        idempotent: false,
    },
    level_exit: false,
    needs_gui: false,
    input: schema_of::<RunLimitedArgs>,
    output: task_schema,
    call: |t, _, _, a| match run_limited::plan(t, a) {
        Err(e) => e,
        Ok(p) => match t.tasks.start(t, p) {
            Ok(task) => {
                let r = task.report();
                let text = format!("started {}", r.task_id);
                report_value(&r, text)
            }
            Err(e) => e,
        },
    },
};

fn with_task(t: &Tools, a: Value, f: impl FnOnce(&Task) -> Value) -> Value {
    match serde_json::from_value::<TaskArgs>(a) {
        Err(e) => results::usage(&format!("arguments: {e}")),
        Ok(a) => match t.tasks.find(&a.task_id) {
            Ok(task) => f(&task),
            Err(e) => e,
        },
    }
}

pub(crate) const STATUS: Spec = Spec {
    name: "run_status",
    title: "How a task goes",
    description: "A task's state (running or ended), the tails of its stdout and stderr so \
far, and once ended its exit code, peak footprint and whole run_limited report.",
    group: ToolGroup::Run,
    effect: Effect::Reads,
    level_exit: false,
    needs_gui: false,
    input: schema_of::<TaskArgs>,
    output: task_schema,
    call: |t, _, _, a| {
        with_task(t, a, |task| {
            let r = task.report();
            let text = line(&r);
            report_value(&r, text)
        })
    },
};

pub(crate) const TERMINATE: Spec = Spec {
    name: "run_terminate",
    title: "End a task",
    description: "End a task's process tree, only its own: SIGTERM to its `headroom run`, \
which ends the tree (SIGTERM, grace, SIGKILL), and SIGKILL to `run` only if it has not \
ended two graces later. Answers once it ended (or after 30 s, still running). Ending an \
ended task changes nothing.",
    group: ToolGroup::Run,
    effect: Effect::Acts {
        destructive: true,
        idempotent: true,
    },
    level_exit: false,
    needs_gui: false,
    input: schema_of::<TaskArgs>,
    output: task_schema,
    call: |t, _, _, a| {
        with_task(t, a, |task| {
            task.call.cancel();
            let end = Instant::now() + TERMINATE_WAIT;
            while task.running() && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(20));
            }
            let r = task.report();
            let text = line(&r);
            report_value(&r, text)
        })
    },
};

pub(crate) const LIST: Spec = Spec {
    name: "run_list",
    title: "The session's tasks",
    description: "Every task of this session (at most 32 kept; the oldest ended go first), \
each as run_status reports it.",
    group: ToolGroup::Run,
    effect: Effect::Reads,
    level_exit: false,
    needs_gui: false,
    input: schema_of::<NoArgs>,
    output: list_schema,
    call: |t, _, _, a| {
        if let Err(e) = serde_json::from_value::<NoArgs>(a) {
            return results::usage(&format!("arguments of `run_list`: {e}"));
        }
        let tasks: Vec<Arc<Task>> = lock(&t.tasks.inner).tasks.clone();
        let list = TaskList {
            tasks: tasks.iter().map(|t| t.report()).collect(),
        };
        let running = list.tasks.iter().filter(|r| r.state == "running").count();
        let text = format!(
            "{}, {running} running",
            crate::output::plural(list.tasks.len() as u64, "task")
        );
        report_value(&list, text)
    },
};
