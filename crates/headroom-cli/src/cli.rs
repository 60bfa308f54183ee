//! The command line, as clap derive types only: no I/O here. Values clap can check alone
//! (durations, sizes, percentages) are parsed here; cross-field rules are checked when a
//! command resolves its plan.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::output::ColorChoice;

const AFTER_HELP: &str = "\
Exit status: 0 ok; 1 the unhappy answer the command is about (probe: warning); 2 error \
(probe: critical); 3 refused by a safety rule (probe: unknown); 64 usage error. \
See headroom(1).";

/// The `headroom` package's description (its Cargo.toml), the help's and the man page's first
/// line: a bare `about` would be this crate's. The version is this crate's, released with
/// the package at the same number (scripts/release.sh).
const ABOUT: &str =
    "Keeps a developer's machine from running out of room: process slots, memory, responsiveness";

/// Keeps a developer's machine from running out of room: process slots, memory and
/// responsiveness.
#[derive(Debug, Parser)]
#[command(name = "headroom", version, about = ABOUT, after_help = AFTER_HELP, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// The heading global options appear under in every subcommand's help.
const GLOBAL: &str = "Global options";

#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Print JSON: one object for one-shot commands, JSON Lines for streaming ones.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub json: bool,
    /// The recorded snapshot of the commands that replay one (`--snapshot` is theirs, not
    /// global: a command that would ignore it does not offer it). Filled in by `dispatch`.
    #[arg(skip)]
    pub snapshot: Option<PathBuf>,
    /// Read settings from FILE instead of the default config file.
    #[arg(long, global = true, value_name = "FILE", help_heading = GLOBAL)]
    pub config: Option<PathBuf>,
    /// Print nothing on stdout but what was asked for in a machine format; keep the exit code.
    #[arg(short, long, global = true, help_heading = GLOBAL)]
    pub quiet: bool,
    /// When to use colour.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN", help_heading = GLOBAL)]
    pub color: ColorChoice,
    /// Read /proc from this directory (testing).
    #[arg(long, global = true, hide = true, value_name = "DIR")]
    pub proc_root: Option<PathBuf>,
    /// Read /sys from this directory (testing).
    #[arg(long, global = true, hide = true, value_name = "DIR")]
    pub sys_root: Option<PathBuf>,
}

// The commands' tests (another crate) build from it: compiled for this crate's tests and the
// `fixtures` feature, which only the dev-dependencies above ask for.
#[cfg(any(test, feature = "fixtures"))]
impl GlobalArgs {
    /// No flags given, colour off: what a unit test of a command's planning starts from.
    pub fn plain() -> Self {
        Self {
            json: false,
            snapshot: None,
            config: None,
            quiet: false,
            color: crate::output::ColorChoice::Never,
            proc_root: None,
            sys_root: None,
        }
    }
}

// `defer`: each subcommand's arguments are defined only when that subcommand is parsed (or
// when help builds the tree). Defining all nineteen on every run cost 0.08 ms of a 1.3 ms
// `log-probe` (bench/log_probe.sh). Man pages and completions use `full_command`.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// One reading of the current user's process slots: usage, level, binding limit, ETA.
    Probe(ProbeArgs),
    /// Every process-slot ceiling: value, where it was read, whether it binds.
    Limits(LimitsArgs),
    /// Record the process table, the ceilings and memory totals as JSON.
    Snapshot(SnapshotArgs),
    /// Kill zombie-leaking parents safely and verify their slots came back.
    Reap(ReapArgs),
    /// Summarise the evidence log (peaks, lowest free slots, ETA minima, cleanups) and chart it.
    Evidence(EvidenceArgs),
    /// Audit the liveness guard: poll and show how each parent would be judged. Never signals.
    IdleWatch(IdleWatchArgs),
    /// Show what the session-log reader makes of one log directory, file by file.
    LogProbe(LogProbeArgs),
    /// Run a command with a memory limit on its whole process tree.
    Run(RunArgs),
    /// One row per process tree you own, largest footprint first.
    Top(TopArgs),
    /// Stop one process (SIGSTOP) so its memory can be reclaimed.
    Park(PidArgs),
    /// Continue one stopped process (SIGCONT).
    Wake(PidArgs),
    /// Stop a whole process tree, root first.
    ParkTree(PidArgs),
    /// Continue a whole process tree, leaves first.
    WakeTree(PidArgs),
    /// Sample memory use and suggest a `run --limit`.
    Calibrate(CalibrateArgs),
    /// Detect and recover apps that macOS marks "not responding".
    Hangs(HangsArgs),
    /// Start headroom watch at login: register, status, unregister.
    LoginItem(LoginItemArgs),
    /// The long-lived guard: probe, reap, hangs and memory guards on a loop.
    Watch(WatchArgs),
    /// Print the effective settings and where each came from.
    Config(ConfigArgs),
    /// Check headroom's readings against the system's own tools (a diagnostic).
    Doctor(DoctorArgs),
    /// Print the JSON Schema of an output (`--json`), or list them.
    Schema(SchemaArgs),
    /// Serve the toolbox to a coding agent: a Model Context Protocol server on stdio.
    Mcp(McpArgs),
    /// Generate man pages, JSON Schemas or shell completions.
    #[command(hide = true)]
    Generate(GenerateArgs),
}

/// The whole tree with every subcommand's arguments defined up front, as a build without
/// `defer` has it: global flags after each subcommand's own, and `help` knowing the nested
/// subcommands. Man pages and completions are generated from this.
pub fn full_command() -> clap::Command {
    <Cli as clap::CommandFactory>::command().mut_subcommands(define_now)
}

/// `sub` with its arguments (and its struct's `after_help`) defined now rather than deferred.
pub(crate) fn define_now(sub: clap::Command) -> clap::Command {
    match define_args(sub.get_name()) {
        // The derive's deferred definition is replaced by one that adds nothing.
        Some(define) => define(sub).defer(std::convert::identity),
        None => sub,
    }
}

/// What `defer` postpones for the subcommand `name`: adding its arguments.
fn define_args(name: &str) -> Option<fn(clap::Command) -> clap::Command> {
    Some(match name {
        "probe" => ProbeArgs::augment_args,
        "limits" => LimitsArgs::augment_args,
        "snapshot" => SnapshotArgs::augment_args,
        "reap" => ReapArgs::augment_args,
        "evidence" => EvidenceArgs::augment_args,
        "idle-watch" => IdleWatchArgs::augment_args,
        "log-probe" => LogProbeArgs::augment_args,
        "run" => RunArgs::augment_args,
        "top" => TopArgs::augment_args,
        "park" | "wake" | "park-tree" | "wake-tree" => PidArgs::augment_args,
        "calibrate" => CalibrateArgs::augment_args,
        "hangs" => HangsArgs::augment_args,
        "login-item" => LoginItemArgs::augment_args,
        "watch" => WatchArgs::augment_args,
        "config" => ConfigArgs::augment_args,
        "doctor" => DoctorArgs::augment_args,
        "schema" => SchemaArgs::augment_args,
        "mcp" => McpArgs::augment_args,
        "generate" => GenerateArgs::augment_args,
        _ => return None,
    })
}

// No doc comment: clap derive would take a flattened struct's as the about of every command
// that flattens it (clap#3127), replacing their own one-liners.
#[derive(Debug, Args)]
pub struct SnapshotArg {
    /// Read a recorded snapshot (`headroom snapshot -o FILE`; `-` reads standard input)
    /// instead of the live machine.
    #[arg(long, value_name = "FILE")]
    pub snapshot: Option<PathBuf>,
}

impl Command {
    /// The `--snapshot` given to a command that honours it.
    pub fn snapshot(&self) -> Option<&PathBuf> {
        match self {
            Self::Probe(a) => a.replay.snapshot.as_ref(),
            Self::Limits(a) => a.replay.snapshot.as_ref(),
            Self::Reap(a) => a.replay.snapshot.as_ref(),
            Self::IdleWatch(a) => a.replay.snapshot.as_ref(),
            Self::Top(a) => a.replay.snapshot.as_ref(),
            Self::Watch(a) => a.replay.snapshot.as_ref(),
            _ => None,
        }
    }
}

/// `run --enforce`: who holds the memory limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Enforce {
    /// The kernel where headroom may make a cgroup with the memory controller, else polling.
    Auto,
    /// The kernel, or refuse to run (exit 125) saying why it cannot.
    Kernel,
    /// headroom's polling watchdog only.
    Poll,
}

/// Output formats of `probe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProbeFormat {
    Human,
    Json,
    /// node_exporter textfile format.
    Prometheus,
    /// A SwiftBar plugin's output: the menu-bar figure, then its menu.
    Swiftbar,
    /// The same for xbar, in the parameters it knows (colour from `XBARDarkMode`).
    Xbar,
    /// One line of tmux styles for `status-right`: `#(headroom probe --format tmux)`.
    Tmux,
}

impl ProbeFormat {
    /// A figure for a menu bar or a status line, which shows nothing for a non-zero exit:
    /// the level is in the figure and the exit is 0 once it is printed.
    pub fn is_figure(self) -> bool {
        matches!(self, Self::Swiftbar | Self::Xbar | Self::Tmux)
    }
}

#[derive(Debug, Args)]
pub struct ThresholdArgs {
    /// Warning threshold, percent of the effective limit (inclusive) [default: 50].
    #[arg(long, value_name = "PCT", value_parser = parse_pct, allow_hyphen_values = true)]
    pub warn: Option<f64>,
    /// Critical threshold, percent of the effective limit (inclusive) [default: 75].
    #[arg(long, value_name = "PCT", value_parser = parse_pct, allow_hyphen_values = true)]
    pub crit: Option<f64>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 normal, 1 warning, 2 critical, or `-o FILE` could not be \
written (the reading is printed on stdout instead), 3 unknown (no ceiling readable) — the \
monitoring-plugin convention; 64 usage error.\n\nThe trend is fitted over the readings of \
the last 10 minutes after the last drop (a fall of at least 5 slots and 2 %, as a cleanup \
makes); it needs 3 readings spanning a minute, and gives an ETA only while usage rose over \
the newest minute. Run probe from cron every minute to build it.\n\nExit status with `--format \
swiftbar` or `--format tmux`: 0 once the figure is printed (a menu bar or a status line \
shows nothing for a non-zero exit; the figure's glyph and colour carry the level), 3 when \
no reading could be made (`--format xbar` likewise)."
)]
pub struct ProbeArgs {
    #[command(flatten)]
    pub replay: SnapshotArg,
    #[command(flatten)]
    pub thresholds: ThresholdArgs,
    /// Neither read nor write the reading history (no trend, no ETA).
    #[arg(long)]
    pub no_history: bool,
    /// Output format (`--json` is the same as `--format json`; with another format it is a
    /// usage error, exit 64, as clap's conflicting flags are).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<ProbeFormat>,
    /// Write the output to FILE atomically instead of stdout (for the node_exporter textfile
    /// collector).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also record the snapshot this reading was computed from, for a bug report or replay.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(after_help = "Exit status as for probe: 0 normal, 1 warning, 2 critical, 3 unknown.")]
pub struct LimitsArgs {
    #[command(flatten)]
    pub replay: SnapshotArg,
    #[command(flatten)]
    pub thresholds: ThresholdArgs,
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Write to FILE (atomically) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Every target is sent SIGTERM at once and the grace is shared; when it ends the \
table is read again and the selection made again for the survivors, and only those it still \
chooses get SIGKILL (a parent that reaped its own zombies meanwhile is spared). Only the \
zombies of parents headroom ended count as reaped. Verification waits up to 10 s for \
whoever inherits them (init, a container's pid 1, a subreaper) to reap them, and names it \
when it has not.\n\nExit status: 0 nothing needed doing, or every target verified or no \
longer a target at its signal; 1 a target survived, or its zombies were not reaped within \
10 s; 2 error; 3 refused: headroom's own parent chain cannot be read, so nothing above it \
could be protected (nothing is signalled); 64 usage error (nothing is signalled). An evidence \
row that cannot be written is a warning, never the exit code."
)]
pub struct ReapArgs {
    #[command(flatten)]
    pub replay: SnapshotArg,
    /// Show the decision table and stop: signal nothing.
    #[arg(short = 'n', long)]
    pub dry_run: bool,
    /// Allow pattern (repeatable; plain case-insensitive substring; with `/` it matches the
    /// full path, else the name or the executable's file name); replaces the configured
    /// allowlist [default: agency].
    #[arg(long, value_name = "PAT")]
    pub allow: Vec<String>,
    /// Deny pattern (repeatable; matches name and full path; always wins); added to the
    /// configured denylist, never replacing it.
    #[arg(long, value_name = "PAT")]
    pub deny: Vec<String>,
    /// Zombies a parent must hold to be a candidate [default: 100].
    #[arg(long, value_name = "N", value_parser = parse_positive, allow_hyphen_values = true)]
    pub min_zombies: Option<u64>,
    /// Wait between SIGTERM and SIGKILL, 100ms to 60s [default: 2s].
    #[arg(long, value_name = "DUR", value_parser = parse_duration, allow_hyphen_values = true)]
    pub grace: Option<Duration>,
    /// Most parents terminated in one run [default: 10].
    #[arg(long, value_name = "N", value_parser = parse_positive, allow_hyphen_values = true)]
    pub max_targets: Option<u64>,
    /// A session idle this long counts as finished [default: 2h].
    #[arg(long, value_name = "DUR", value_parser = parse_duration, allow_hyphen_values = true)]
    pub idle_threshold: Option<Duration>,
    /// Never relax the session guard, even at the wall.
    #[arg(long)]
    pub no_emergency: bool,
}

#[derive(Debug, Args)]
pub struct EvidenceArgs {
    /// Only rows from the last DUR.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, allow_hyphen_values = true)]
    pub since: Option<Duration>,
    /// Draw used slots against the limit before the summary (the default on a terminal;
    /// this flag draws it when piped too).
    #[arg(long)]
    pub chart: bool,
    /// Draw the chart in plain ASCII (the default under TERM=dumb).
    #[arg(long)]
    pub ascii: bool,
    /// Chart width in columns [default: the terminal's, else $COLUMNS, else 80].
    #[arg(long, value_name = "N", value_parser = parse_chart_width, allow_hyphen_values = true)]
    pub width: Option<usize>,
    /// Also write the chart as a self-contained SVG to FILE (`-`: standard output, which
    /// then carries the SVG alone). A regular file (or a new one) is replaced atomically;
    /// a device, a FIFO or `/dev/stdout` is opened and written, and stays what it is. A
    /// symbolic link is written through when it is yours or root's, refused otherwise.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// The clock the chart's times are in: `utc`, or `local` (the offset is shown).
    #[arg(long, value_enum, value_name = "ZONE", default_value = "utc")]
    pub tz: ChartZone,
}

/// `evidence --tz`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ChartZone {
    Utc,
    Local,
}

/// The narrowest chart that still has room for labels and a readable plot.
pub const MIN_CHART_WIDTH: usize = 30;
/// The widest chart `--width` allows.
pub const MAX_CHART_WIDTH: usize = 1000;

/// A chart width: at least `MIN_CHART_WIDTH` columns, at most `MAX_CHART_WIDTH`.
pub(crate) fn parse_chart_width(s: &str) -> Result<usize, String> {
    let min = MIN_CHART_WIDTH;
    let v: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number of columns"))?;
    let max = MAX_CHART_WIDTH;
    if !(min..=max).contains(&v) {
        return Err(format!(
            "`{s}` is out of range: a chart is {min} to {max} columns wide"
        ));
    }
    Ok(v)
}

#[derive(Debug, Args)]
pub struct IdleWatchArgs {
    #[command(flatten)]
    pub replay: SnapshotArg,
    /// How long to watch.
    #[arg(short, long, value_name = "DUR", default_value = "5m", value_parser = parse_duration, allow_hyphen_values = true)]
    pub duration: Duration,
    /// Idle threshold to judge against (deliberately short: this mode is watched, not waited out).
    #[arg(long, value_name = "DUR", default_value = "2m", value_parser = parse_duration, allow_hyphen_values = true)]
    pub threshold: Duration,
    /// Poll interval (alias --every).
    #[arg(short = 'i', long = "interval", alias = "every", value_name = "DUR", default_value = "30s", value_parser = parse_duration, allow_hyphen_values = true)]
    pub every: Duration,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Per file: `work N ago` (its newest line that is not a known heartbeat), \
`heartbeat only for at least N` (only telemetry, metrics, HTTP and policy-fetch lines back to \
the 6 h horizon, the 4 MiB budget or the start of the file), `unknown` (no timestamped line, or \
unreadable), or `skipped` (a name containing `telemetry`, an empty file, a directory). The \
directory is active if any file shows work, unknown if any file is unknown; unknown protects. \
Content decides, never the mtime: every file is read, however old its mtime (which `touch`, \
`cp -p`, `rsync -a` or `tar x` can set behind its content); the mtime only picks which 32 \
files get the full budget when there are more, the rest are read at their end (16 KiB, \
`heartbeat only … (its end only)`), and a directory of more than 1,024 such files is \
unknown without reading any.\n\n\
Exit status: 0 whenever the directory was judged, whatever the verdict (read it from the \
output or `--json`); 2 DIR is missing, not a directory or unreadable; 64 usage error (`--at` \
not RFC 3339, or in the future)."
)]
pub struct LogProbeArgs {
    /// The session log directory (a session child's `--log-dir`).
    pub dir: PathBuf,
    /// Judge as of this past instant (RFC 3339 with any offset, like `2026-08-29T09:21:47Z` or
    /// `2026-08-29T11:21:47+02:00`); lines stamped after it are ignored, to replay an archived
    /// directory.
    #[arg(long, value_name = "RFC3339")]
    pub at: Option<String>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "The tree is every descendant by live parent links plus anything still \
in the command's process group. On Linux headroom is a child subreaper, so orphans of the \
tree come back to it and stay in the tree. On macOS (no subreaper) a process once seen in the \
tree is followed until it exits, but a double-forked daemon that left both the tree and the \
group before headroom saw it escapes, by design. Footprint: RssAnon + VmSwap on Linux, \
phys_footprint on macOS.\n\n\
Over the limit, headroom first parks idle subtrees (SIGSTOP; under 2 % of a core over the last \
second, at least 512 MiB, holding no session or group leader and not the command) and looks again a second \
later; still over, it sends SIGTERM to the whole tree and, after --grace, SIGKILL to the \
survivors of that SIGTERM only if together they still hold at least the limit (else they are \
spared); a process born during the grace is not signalled until it outlives the command. With less than 15 % of memory free the limit is lowered, to 80 % of it at 0 % free. \
When the command exits, what is left of its tree gets SIGTERM, the grace, SIGKILL. \
SIGINT, SIGTERM and SIGHUP sent to headroom are passed on to the command's process group; if \
the command still runs --grace later (or at a second signal), headroom ends the tree. \
headroom writes only to stderr (or to --records-fd): one line at the end, JSON Lines with \
--json.\n\n\
--timeout ends the tree when it passes, the same way (SIGTERM to the whole tree, --grace, \
SIGKILL to what is left); `ended_by` reads `timeout`. --die-with-parent does the same when the \
process that started headroom exits (`parent-exited`), for a program that starts `run` and \
may die without ending it (an agent's tool server, a script killed by its supervisor); \
without it `run` outlives its parent, as a command under `nohup` should.\n\n\
--enforce auto (the default) also has the kernel hold the limit where it can (Linux): the \
command runs in a cgroup of its own, made in a subtree this user may write to with the memory \
controller delegated (cgroup v2 memory.max, memory.high a sixteenth below, swap 0; v1 \
memory.limit_in_bytes), joined before exec, read back, removed at the end. The watchdog still \
parks and reports beside it. Where that is impossible auto polls and says why; --enforce \
kernel refuses (exit 125).\n\n\
Exit status: the command's own code; 143 when headroom ended the tree with SIGTERM (over the \
limit, a forwarded signal, --timeout, the parent's exit), 137 when it needed SIGKILL; 125 \
headroom failed; 126 not executable; 127 not found."
)]
pub struct RunArgs {
    /// Memory limit for the whole tree: MiB, or with a unit (512M, 2G).
    #[arg(short, long, value_name = "SIZE", value_parser = parse_size, allow_hyphen_values = true)]
    pub limit: u64,
    /// Poll interval.
    #[arg(short, long, value_name = "DUR", default_value = "200ms", value_parser = parse_duration, allow_hyphen_values = true)]
    pub interval: Duration,
    /// Wait between SIGTERM and SIGKILL.
    #[arg(long, value_name = "DUR", default_value = "5s", value_parser = parse_duration, allow_hyphen_values = true)]
    pub grace: Duration,
    /// Who holds the limit: the kernel (a cgroup with memory.max, Linux), polling, or the
    /// kernel where it can and polling where not.
    #[arg(long, value_enum, value_name = "HOW", default_value_t = Enforce::Auto)]
    pub enforce: Enforce,
    /// Warn once when the tree reaches this percentage of the limit (again only after it
    /// dropped 5 points below); 100 turns it off [default: [memory] warn_pct, else 90].
    #[arg(long, value_name = "PCT", value_parser = parse_pct, allow_hyphen_values = true)]
    pub warn: Option<f64>,
    /// End the tree once this long has passed (SIGTERM, --grace, SIGKILL), like `90s` or
    /// `2h`.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, allow_hyphen_values = true)]
    pub timeout: Option<Duration>,
    /// End the tree when the process that started headroom exits.
    #[arg(long)]
    pub die_with_parent: bool,
    /// Write headroom's own lines (the records with --json) to this inherited file
    /// descriptor, open for writing, instead of stderr: stdout and stderr are then the
    /// command's alone. The command does not inherit it.
    #[arg(long, value_name = "FD", value_parser = clap::value_parser!(i32).range(3..))]
    pub records_fd: Option<i32>,
    /// The command and its arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<std::ffi::OsString>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Two samples about 500 ms apart give each tree's growth and CPU. A tree is a \
park candidate (PARK_IDLE) when it is running, used under 2 % of a core between the samples, \
holds at least --park-min-mb and may be parked; otherwise its reason_code is GROWTH_RATE \
(over 200 KB/s), else PRESSURE (under 15 % of memory free), else NONE."
)]
pub struct TopArgs {
    #[command(flatten)]
    pub replay: SnapshotArg,
    /// Only the tree rooted at PID.
    #[arg(long, value_name = "PID", value_parser = parse_pid, allow_hyphen_values = true)]
    pub pid: Option<i32>,
    /// Footprint from which an idle tree is a park candidate, MiB.
    #[arg(long, value_name = "N", default_value_t = 512, value_parser = parse_positive, allow_hyphen_values = true)]
    pub park_min_mb: u64,
    /// Keep refreshing until SIGINT or SIGTERM: a live view on a terminal, one table a round
    /// when piped, JSON Lines with --json.
    #[arg(long)]
    pub watch: bool,
    /// Time between refreshes with --watch [default: 2s].
    #[arg(short, long, value_name = "DUR", requires = "watch", value_parser = parse_duration, allow_hyphen_values = true)]
    pub interval: Option<Duration>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Every signal is addressed to the process's identity (pid, start time, uid), \
re-read just before it is sent. Refused (exit 3): pid 1 or lower, another user's process, \
headroom itself and its ancestors.\n\nExit status: 0 done, or nothing to do; 1 park-tree or \
wake-tree left members unchanged (refused, or not stopped in time; listed, and in `left`); 2 no such \
process, or a signal could not be sent; 3 refused."
)]
pub struct PidArgs {
    /// The process id.
    #[arg(allow_negative_numbers = true, value_parser = parse_pid_any)]
    pub pid: i64,
}

#[derive(Debug, Args)]
#[command(after_help = "\
A diagnostic, not a monitor: it execs the system's tools (ps, sysctl, launchctl, sh) and starts \
a child of its own that burns a second of CPU and touches 64 MiB, so it needs free process \
slots and memory. Do not use it at the wall; use `headroom probe` and `headroom limits` there.

Checks: your processes and zombies against `ps` (read before and after headroom, so churn is \
bounded and reported); every ceiling against the system's answer (macOS: `sysctl -n \
kern.maxprocperuid kern.maxproc`, `launchctl limit maxproc`, `ulimit -u` in a login shell, the \
inherited-RLIMIT trap; Linux: `ulimit -u`, threads-max, pid_max, the pids cgroup); the child's \
CPU time and footprint against `ps -o time=,rss=`; the state directory (owner, mode, \
writable); the login item and brew service; whether notifications can be posted; on macOS \
whether the WindowServer interface answers. Each line is ok, mismatch or skipped (why), with \
both values.

With --no-exec only the checks that start no process are made (the ceilings read from the \
kernel's files, the cgroup, the state directory, the WindowServer interface); every other is \
skipped and says so. `headroom mcp` runs it so unless its tools may start processes.

Exit status: 0 nothing mismatches; 1 something does; 2 the process table cannot be read.")]
pub struct DoctorArgs {
    /// Start no process: skip the checks that ask another tool (`ps`, a login shell's
    /// `ulimit -u`, `sysctl`, `launchctl`, `systemctl`, the notification helper) or burn
    /// CPU in a child.
    #[arg(long)]
    pub no_exec: bool,
    /// Internal: be the child doctor measures.
    #[arg(long, hide = true)]
    pub burn_child: bool,
}

#[derive(Debug, Args)]
#[command(after_help = "\
Every JSON object headroom prints (a one-shot report, each line of a JSON Lines stream, the \
error object) carries `schema`, its name, like `headroom.probe/2`; the version goes up when a \
field is renamed or removed. The schemas are generated from the types headroom prints with, \
and committed in the repository's `schemas/` directory.")]
pub struct SchemaArgs {
    /// The output: its schema name (`headroom.probe/2`) or short name (`probe`). Without
    /// it, the names are listed (with `--json`, every schema).
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
}

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// How long to sample.
    #[arg(short, long, value_name = "DUR", default_value = "30s", value_parser = parse_duration, allow_hyphen_values = true)]
    pub duration: Duration,
}

#[derive(Debug, Args)]
#[command(after_help = "\
One check round: which GUI apps the WindowServer marks unresponsive now, and each one's \
state (pending, cooling-down, confirmed, blocked, ignored, stopped, traced). A hang is \
confirmed by two consecutive rounds at least [hangs] min_interval (5s) apart, then restarted \
(at most once an hour per app; only a restart that signalled the app counts, so one that \
did nothing is tried again next round); an app unresponsive again during that hour is \
blocked and you are notified once. An app that is stopped (parked, SIGSTOP) or traced (a \
debugger holds it) cannot answer and is never restarted: it is reported as such and its \
pending and blocked state cleared. State is kept in the state \
directory, so rounds from cron or --watch are consecutive. macOS only, except \
--observations and --events.

--observations FILE replays recorded rounds on any OS: {\"rounds\": [{\"at\": \
\"2026-11-30T10:00:00Z\", \"available\": true, \"apps\": [{\"pid\": 501, \"bundle_id\": \
\"com.example.Editor\" (or null), \"bundle_path\": \"/Applications/Editor.app\", \"name\": \
\"Editor\", \"policy\": \"regular\" | \"accessory\" | \"prohibited\", \"responsive\": \
false}]}]}; optional per app: \"start_time\", \"uid\", \"state\" (\"stopped\", \"traced\", \
\"running\", ...). Decisions are made as live; actions are only listed, step by step; nothing is \
written unless --record-events.

Exit status: 0 nothing hung, or every confirmed hang was restarted, or a --dry-run (whatever \
it found, as reap --dry-run); 1 a confirmed hang is left (blocked, restart failed, or any \
replayed round); 2 error, including the \
interface unavailable (no GUI session) on a single live round; 64 usage error. --watch \
ends with 0 on SIGTERM, 75 on SIGHUP and 130 on SIGINT.")]
pub struct HangsArgs {
    /// Decide, but act on nothing: no signal, no restart, no notification, no state or
    /// event written.
    #[arg(short = 'n', long)]
    pub dry_run: bool,
    /// Keep running check rounds (JSON Lines with --json) until SIGINT or SIGTERM.
    #[arg(long)]
    pub watch: bool,
    /// Interval between rounds with --watch (1s to 10m; alias --every) [default: 15s].
    #[arg(short = 'i', long = "interval", alias = "every", value_name = "DUR", value_parser = parse_duration, allow_hyphen_values = true)]
    pub every: Option<Duration>,
    /// List the event history (detected, restarted, restart-failed, blocked) instead of
    /// checking.
    #[arg(long)]
    pub events: bool,
    /// With --events: only the last DUR.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, allow_hyphen_values = true)]
    pub since: Option<Duration>,
    /// Drive the monitor from recorded rounds instead of the live system (any OS; `-` reads
    /// standard input).
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub observations: Option<PathBuf>,
    /// With --observations: append the replay's events to the event history (by default a
    /// replay writes nothing, so running it twice does not duplicate history).
    #[arg(long)]
    pub record_events: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LoginItemAction {
    Register,
    Status,
    Unregister,
}

#[derive(Debug, Args)]
pub struct LoginItemArgs {
    #[arg(value_enum, default_value_t = LoginItemAction::Status)]
    pub action: LoginItemAction,
}

#[derive(Debug, Args)]
#[command(after_help = "\
Memory guards ([[memory.guard]] in the config file): a guard holds the topmost process of \
each chain whose name matches its pattern, with everything below it, not the root of your \
tree. With pattern = \"cargo\" and the chain sshd → bash → cargo → (rustc, and cargo → \
build-script), the first cargo is held with the three processes below it (the nested cargo \
is inside it, not a tree of its own). \
Never held (counted, parked or ended), whatever matches: a session leader (a login or \
terminal shell, a tmux pane's shell, a service's main process), a shell at its terminal's \
prompt (it leads the terminal's foreground process group; a job it runs in the foreground \
is held, and so is the shell once the job holds the terminal), headroom and its \
ancestors, other users' processes. A held tree stops at them; a match below one of them \
is a held tree of its own.

Patterns are plain substrings, held to one rule everywhere (guards, reap's allow and deny, \
[hangs] entries, flags, MCP arguments): only `/`, one character, no letter or digit, or a \
glob or regex character (* ? [ ] | ^ $ \\) is refused, exit 64.

watch acts only on settings from a file that you (or root) own, that group and others \
cannot write, in directories they cannot write (a sticky one such as /tmp excepted): \
otherwise it prints one line naming the file and the rule and exits 2, signalling nothing; \
so do reap and live hangs rounds, and headroom mcp's acting tools. Read-only commands use \
such a file with a warning.

A parked process is recorded in the state directory (watch-parked.json) before its SIGSTOP, \
and watch wakes what it parked when it exits; after a SIGKILL of watch itself they stay \
stopped until the next watch starts, which continues them first, each only if its pid \
still names the same process (start time, uid, boot): a reused pid is never signalled. \
No cleanup waits for the state directory: a full or read-only one is said once and the \
cleanup acts.

Under a service manager. The LaunchAgent (`login-item register`), the systemd unit and \
`brew services` start `headroom watch` with HEADROOM_SERVICE set to their label, and \
restart it when it exits non-zero or dies by a signal, never when it exits 0. A guard holds \
watch.lock in the state directory, with its pid and label written in. A second guard started \
by hand refuses (exit 3), naming the holder; under a service it exits 0 when the holder is \
another service's guard (two services registered: keep one), and otherwise waits and guards \
as soon as the holder stops. Each round it looks at the program it was started by: when an \
upgrade has replaced it, it says so once, and under a service it then exits 75, so that the \
new program is started (by hand it goes on with the old one).

What it does unasked: reap when the level stays critical for two readings ([watch] \
auto_reap), restart apps unresponsive in two rounds a minute apart on macOS ([watch] hangs; \
an app that cannot save on SIGTERM loses its unsaved work), act on [[memory.guard]] trees. \
`headroom doctor` lists it from the effective config.

Exit status: 0 stopped by SIGTERM, or under a service another service's guard runs; 3 \
another guard runs (started by hand); 75 stopped by SIGHUP (it does not reload: it is \
started afresh), or under a service its program was replaced; 130 SIGINT; with --once, \
probe's code.")]
pub struct WatchArgs {
    #[command(flatten)]
    pub replay: SnapshotArg,
    #[command(flatten)]
    pub thresholds: ThresholdArgs,
    /// Time between rounds [default: 60s].
    #[arg(short, long, value_name = "DUR", value_parser = parse_duration, allow_hyphen_values = true)]
    pub interval: Option<Duration>,
    /// Run one round and exit with probe's exit code (memory guards do not park in it: the
    /// exit would wake them at once; a tree over its guard goes straight to SIGTERM).
    #[arg(long)]
    pub once: bool,
    /// Never reap automatically. (The automatic cleanup runs beside the rounds: readings and
    /// memory guards go on while its escalation waits out the grace.)
    #[arg(long)]
    pub no_auto_reap: bool,
    /// Skip the hangs round.
    #[arg(long)]
    pub no_hangs: bool,
    /// Read the whole process table at least this often [default: 4m]. Between such rounds,
    /// while every task on the machine together is below 80 % of the warning threshold of
    /// the effective limit (so the user's own slots are too), a round reads only that count
    /// and the ceilings, and prints and records nothing; every round reads the table once the
    /// count nears the threshold, while a reading is above normal, and with memory guards.
    /// `0s`: every round reads the table.
    #[arg(long, value_name = "DUR", value_parser = parse_duration_or_zero, allow_hyphen_values = true)]
    pub table_every: Option<Duration>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "The flags shown here override the file for this listing, as they do for \
probe/limits/watch, so the origin column reads `flag`."
)]
pub struct ConfigArgs {
    #[command(flatten)]
    pub thresholds: ThresholdArgs,
    /// As for `watch --interval`.
    #[arg(short, long, value_name = "DUR", value_parser = parse_duration, allow_hyphen_values = true)]
    pub interval: Option<Duration>,
}

#[derive(Debug, Args)]
#[command(after_help = "\
Newline-delimited JSON-RPC 2.0 on stdin and stdout (MCP 2025-11-25, 2025-06-18, 2025-03-26 with \
its batches, 2024-11-05, and the stateless 2026-07-28 style with `server/discover`); \
diagnostics go to stderr; no network listener. Calls run concurrently (8 at a time); `ping` \
is answered at once; a cancelled call is ended and not answered; a request with a \
progressToken gets progress notifications.

Tools, by group (--tools, or `[mcp] tools` in the config): read: probe, limits, top, evidence, \
log_probe, hangs_events, hangs_check (a live `hangs --dry-run` round; macOS in a GUI session \
only), doctor, explain_reap; act: reap, park, wake, park_tree, wake_tree; \
run: run_limited, which starts any program the user could (`[mcp] run_allow` lists the only \
ones it may start), and the same as a task: run_start (answers with a task id at once), \
run_status, run_terminate, run_list. Each calls the command of the same name and returns its `--json` report \
as structuredContent and as text; a refusal (pid 1 or lower, another user's process, \
headroom and its ancestors, which include the agent that started the server) is a result \
with isError and the rule's name. `reap`'s arguments can only narrow the configured policy. \
Without `run`, nothing the server does starts a process (doctor skips the checks that \
would). Resources: the current reading, the evidence log's recent rows, the hang events and \
the effective config, with updates while subscribed; prompts: `out-of-slots`.

When stdin closes or SIGTERM arrives, every run and task the server started is ended (its tree: \
SIGTERM, grace, SIGKILL) before it exits; each run also ends its tree if the server dies.

Register it with an agent as the command `headroom mcp` (see the README).

Exit status: 0 when stdin ends or SIGTERM arrives; 2 stdin or stdout failed.")]
pub struct McpArgs {
    /// Offer only the read tools (`--tools read`): nothing the agent calls can signal or
    /// start a process.
    #[arg(long, conflicts_with = "tools")]
    pub read_only: bool,
    /// The groups of tools to offer, comma-separated [default: `[mcp] tools`, else
    /// read,act,run].
    #[arg(long, value_name = "GROUPS", value_enum, value_delimiter = ',')]
    pub tools: Option<Vec<ToolGroup>>,
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    #[command(subcommand)]
    pub what: GenerateWhat,
}

#[derive(Debug, Subcommand)]
pub enum GenerateWhat {
    /// Man pages: headroom.1 and one page per subcommand.
    Man {
        /// Output directory.
        dir: PathBuf,
    },
    /// The JSON Schemas: one file per output in DIR (`headroom.probe.1.json`).
    Schemas {
        /// Output directory.
        dir: PathBuf,
    },
    /// A completion script on stdout.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// The SwiftBar plugin (`headroom.30s.sh`) on stdout, or written into DIR.
    Swiftbar {
        /// Directory to write the plugin into (SwiftBar's plugin folder).
        dir: Option<PathBuf>,
    },
}

// ----- value parsers -------------------------------------------------------------------

/// The longest duration any flag or config value accepts: ten years. Beyond it an
/// `Instant` deadline may not exist (`run --interval 500000000000y` aborted on overflow).
pub(crate) const DURATION_MAX: Duration = Duration::from_secs(3650 * 86_400);

/// Why `s` is not a duration, in the user's words: humantime's own messages name parser
/// positions ("expected number at 0").
pub(crate) fn duration_error(s: &str, e: &humantime::DurationError) -> String {
    use humantime::DurationError as E;
    if s.trim().starts_with('-') {
        return format!("`{s}` is negative; the duration must be positive");
    }
    let why = match e {
        E::UnknownUnit { unit, .. } => format!(" (unknown unit `{unit}`)"),
        E::NumberOverflow => return format!("`{s}` is too long: at most 3650 days"),
        E::Empty => " (it is empty)".to_string(),
        E::InvalidCharacter(_) | E::NumberExpected(_) => String::new(),
    };
    format!("`{s}` is not a duration{why}; write it like `90s`, `2h` or `500ms`")
}

/// A humantime duration (`90s`, `2h`, `500ms`), strictly positive, at most `DURATION_MAX`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s.trim()).map_err(|e| duration_error(s, &e))?;
    if d.is_zero() {
        return Err(format!("`{s}` is zero; the duration must be positive"));
    }
    if d > DURATION_MAX {
        return Err(format!("`{s}` is too long: at most 3650 days"));
    }
    Ok(d)
}

/// As `parse_duration`, where zero means "every time".
pub(crate) fn parse_duration_or_zero(s: &str) -> Result<Duration, String> {
    match humantime::parse_duration(s.trim()) {
        Ok(d) if d.is_zero() => Ok(d),
        _ => parse_duration(s),
    }
}

/// `d` within `[min, max]`, else a message naming the bound broken.
pub fn check_within(d: Duration, min: Duration, max: Duration) -> Result<(), String> {
    let f = |d: Duration| humantime::format_duration(d).to_string();
    if d < min {
        return Err(format!("`{}` is too short: at least {}", f(d), f(min)));
    }
    if d > max {
        return Err(format!("`{}` is too long: at most {}", f(d), f(max)));
    }
    Ok(())
}

/// A process id to look at: a positive whole number that fits a pid.
pub(crate) fn parse_pid(s: &str) -> Result<i32, String> {
    let v = parse_pid_any(s)?;
    match i32::try_from(v) {
        Ok(p) if p > 0 => Ok(p),
        _ => Err(format!(
            "`{s}` is not a process id: pids are whole numbers from 1 to {}",
            i32::MAX
        )),
    }
}

/// A process id to act on, as typed: any whole number that fits 64 bits, so that the safety
/// rules (not the parser) refuse pid 0, 1 and negative ones (exit 3) and a large one is "no
/// such process".
pub(crate) fn parse_pid_any(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let digits = t.strip_prefix('-').unwrap_or(t);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return t
            .parse::<i64>()
            .map_err(|_| format!("`{s}` is too large for a process id"));
    }
    Err(format!("`{s}` is not a process id (a whole number)"))
}

/// A percentage in (0, 100].
pub(crate) fn parse_pct(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if !v.is_finite() || v <= 0.0 || v > 100.0 {
        return Err(format!(
            "`{s}` is out of range: expected a percentage above 0 and at most 100"
        ));
    }
    Ok(v)
}

/// A whole number ≥ 1.
pub(crate) fn parse_positive(s: &str) -> Result<u64, String> {
    let v: u64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number"))?;
    if v == 0 {
        return Err(format!("`{s}` must be at least 1"));
    }
    Ok(v)
}

/// The smallest memory size accepted: a limit below it would end any process at once.
pub(crate) const SIZE_MIN: u64 = 1 << 20;

/// A memory size in bytes, at least `SIZE_MIN`: a bare number is MiB; units K, M, G, T
/// (binary; `KB`/`KiB` alike, any case). Bytes (`B`) are refused as too small a unit, and
/// anything else as unknown (`512B` used to mean 512 MiB).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!("`{s}` is negative; a size must be positive"));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a size; write it like `512M` or `2G`"))?;
    // The same number in MiB, the unit a too-small size most likely meant.
    let in_mib = || format!("did you mean `{num}M`?");
    let upper = unit.trim().to_ascii_uppercase();
    let mult: u64 = match upper.as_str() {
        "" | "M" | "MB" | "MIB" => 1 << 20,
        "K" | "KB" | "KIB" => 1 << 10,
        "G" | "GB" | "GIB" => 1 << 30,
        "T" | "TB" | "TIB" => 1 << 40,
        "B" => {
            return Err(format!(
                "`{s}` is in bytes, too small a unit for a memory size (at least 1M); {}",
                in_mib()
            ));
        }
        _ => {
            return Err(format!(
                "`{s}` has an unknown unit `{unit}`; use K, M, G or T"
            ));
        }
    };
    let bytes = v * mult as f64;
    if !bytes.is_finite() || bytes > u64::MAX as f64 {
        return Err(format!("`{s}` is too large: at most 16777215T"));
    }
    if bytes < 1.0 {
        return Err(format!("`{s}` is zero; a size must be at least 1M"));
    }
    if (bytes as u64) < SIZE_MIN {
        let hint = if v >= 1.0 {
            format!("; {}", in_mib())
        } else {
            String::new()
        };
        return Err(format!("`{s}` is too small: at least 1M{hint}"));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    /// `full_command` defines each subcommand's own arguments before anything is built (so
    /// the root's global flags follow them, as in an eager build), and exactly the ones the
    /// parser's deferred build ends up with.
    #[test]
    fn the_full_tree_defines_every_subcommand_up_front_as_the_parser_does() {
        let mut parsed = Cli::command();
        parsed.build();
        let globals: Vec<String> = parsed
            .get_arguments()
            .filter(|a| a.is_global_set())
            .map(|a| a.get_id().to_string())
            .collect();
        let unbuilt = full_command();
        for sub in Cli::command().get_subcommands() {
            let name = sub.get_name();
            assert!(
                define_args(name).is_some(),
                "{name} is missing from define_args"
            );
            assert_eq!(sub.get_arguments().count(), 0, "{name} is not deferred");
            let sorted = |ids: Vec<String>| {
                let mut ids = ids;
                ids.sort();
                ids
            };
            let up_front = sorted(
                unbuilt
                    .find_subcommand(name)
                    .map(|s| s.get_arguments().map(|a| a.get_id().to_string()).collect())
                    .unwrap_or_default(),
            );
            let parser_own = sorted(
                parsed
                    .find_subcommand(name)
                    .map(|s| {
                        s.get_arguments()
                            .map(|a| a.get_id().to_string())
                            .filter(|id| !globals.contains(id) && id != "help" && id != "version")
                            .collect()
                    })
                    .unwrap_or_default(),
            );
            assert_eq!(up_front, parser_own, "{name}");
            let nested = |cmd: &clap::Command| -> Vec<String> {
                cmd.find_subcommand(name)
                    .map(|s| {
                        s.get_subcommands()
                            .map(|c| c.get_name().to_string())
                            .filter(|n| n != "help")
                            .collect()
                    })
                    .unwrap_or_default()
            };
            assert_eq!(nested(&unbuilt), nested(&parsed), "{name}");
            assert!(
                !up_front.is_empty() || !nested(&unbuilt).is_empty(),
                "{name} defines nothing up front"
            );
        }
        full_command().debug_assert();
    }

    #[test]
    fn every_subcommand_has_an_about_and_accepts_json() {
        let cmd = Cli::command();
        for sub in cmd.get_subcommands() {
            assert!(sub.get_about().is_some(), "{} has no about", sub.get_name());
            let mut argv = vec!["headroom", sub.get_name(), "--json"];
            match sub.get_name() {
                "log-probe" => argv.push("/tmp"),
                "park" | "wake" | "park-tree" | "wake-tree" => argv.push("42"),
                "run" => argv.extend(["--limit", "1G", "--", "true"]),
                "generate" => argv.extend(["completions", "bash"]),
                _ => {}
            }
            assert!(Cli::try_parse_from(&argv).is_ok(), "{argv:?}");
        }
    }

    #[test]
    fn value_parsers() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert!(parse_duration("-1s").unwrap_err().contains("`-1s`"));
        assert!(parse_duration("abc").is_err());
        assert!(parse_duration("0s").unwrap_err().contains("zero"));
        // No parser internals: humantime says "expected number at 0".
        for bad in ["x", "5 fortnights", "", "1s2"] {
            let e = parse_duration(bad).unwrap_err();
            assert!(!e.contains(" at "), "{bad}: {e}");
        }
        assert!(
            parse_duration("5q")
                .unwrap_err()
                .contains("unknown unit `q`")
        );
        assert!(
            parse_duration("99999999999999999999999s")
                .unwrap_err()
                .contains("too long")
        );
        assert_eq!(parse_pct("75").unwrap(), 75.0);
        assert!(parse_pct("150").is_err());
        assert!(parse_pct("0").is_err());
        assert_eq!(parse_positive("3").unwrap(), 3);
        assert!(parse_positive("0").is_err());
        assert_eq!(parse_size("100").unwrap(), 100 << 20);
        assert_eq!(parse_size("512M").unwrap(), 512 << 20);
        assert_eq!(parse_size("2G").unwrap(), 2 << 30);
        assert_eq!(parse_size("1.5GiB").unwrap(), 3 << 29);
        assert!(parse_size("0").is_err());
        assert!(parse_size("-5").is_err());
        assert!(parse_size("abc").is_err());
        assert!(parse_size("5Q").is_err());
        assert_eq!(parse_size("2048k").unwrap(), 2 << 20);
        assert_eq!(parse_size("1tb").unwrap(), 1 << 40);
    }

    #[test]
    fn sizes_in_bytes_unknown_units_and_tiny_sizes_are_refused() {
        // `512B` meant 512 MiB: the `B` was dropped as if it were `MB`'s.
        assert!(parse_size("512B").unwrap_err().contains("too small a unit"));
        for bad in ["5MBB", "5BM", "5IB", "5Mi B", "5MiBs"] {
            assert!(
                parse_size(bad).unwrap_err().contains("unknown unit"),
                "{bad}"
            );
        }
        assert!(parse_size("1000K").unwrap_err().contains("at least 1M"));
        assert!(
            parse_size("512K")
                .unwrap_err()
                .contains("did you mean `512M`?")
        );
        assert!(
            parse_size("512B")
                .unwrap_err()
                .contains("did you mean `512M`?")
        );
        let e = parse_size("99999999999999999999").unwrap_err();
        assert!(e.contains("too large"), "{e}");
        let e = parse_size(&"9".repeat(400)).unwrap_err();
        assert!(e.contains("too large"), "{e}");
        assert!(parse_size("0.5").unwrap_err().contains("at least 1M"));
        // Controls: the same numbers with a real unit are sizes.
        assert_eq!(parse_size("512MB").unwrap(), 512 << 20);
        assert_eq!(parse_size("1024K").unwrap(), 1 << 20);
    }

    #[test]
    fn pids_are_refused_in_the_users_words() {
        for bad in ["abc", "", "1.5", "0x10", "--"] {
            let e = parse_pid_any(bad).unwrap_err();
            assert!(e.contains("is not a process id"), "{bad}: {e}");
        }
        let e = parse_pid_any("99999999999999999999").unwrap_err();
        assert!(e.contains("too large for a process id"), "{e}");
        // Controls: a large or negative pid is left to "no such process" and the safety rules.
        assert_eq!(parse_pid_any("99999999999"), Ok(99_999_999_999));
        assert_eq!(parse_pid_any("-5"), Ok(-5));
        for bad in ["0", "-1", "99999999999", "x"] {
            let e = parse_pid(bad).unwrap_err();
            assert!(e.contains("is not a process id"), "{bad}: {e}");
            assert!(!e.contains("..="), "{bad}: {e}");
        }
        assert_eq!(parse_pid("4242"), Ok(4242));
    }

    #[test]
    fn a_negative_duration_is_said_to_be_negative() {
        let e = parse_duration("-1s").unwrap_err();
        assert!(e.contains("is negative"), "{e}");
        assert!(parse_duration("1s").is_ok());
    }

    #[test]
    fn durations_are_bounded_at_parse_time() {
        let e = parse_duration("500000000000y").unwrap_err();
        assert!(e.contains("at most 3650 days"), "{e}");
        assert!(parse_duration("3651days").is_err());
        assert_eq!(
            parse_duration("3650days").unwrap(),
            DURATION_MAX,
            "the bound itself is accepted"
        );
        let (min, max) = (Duration::from_millis(10), Duration::from_secs(60));
        assert!(
            check_within(Duration::from_millis(5), min, max)
                .unwrap_err()
                .contains("at least 10ms")
        );
        assert!(
            check_within(Duration::from_secs(61), min, max)
                .unwrap_err()
                .contains("at most 1m")
        );
        assert!(check_within(Duration::from_secs(60), min, max).is_ok());
    }
}

/// A group of `headroom mcp`'s tools (`--tools`, `[mcp] tools`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ToolGroup {
    /// The tools that read: probe, limits, top, evidence, log_probe, hangs_events,
    /// hangs_check (macOS in a GUI session), doctor, explain_reap.
    Read,
    /// The tools that signal processes under the safety rules: reap, park, wake, park_tree,
    /// wake_tree.
    Act,
    /// run_limited and its task form (run_start, run_status, run_terminate, run_list):
    /// start any program the user could (within `[mcp] run_allow`).
    Run,
}

impl ToolGroup {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Act => "act",
            Self::Run => "run",
        }
    }
}
