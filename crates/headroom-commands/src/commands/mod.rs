//! One file per subcommand: resolve args into a plan, call core and actions, build one
//! report, hand it to the Printer.

pub(crate) mod calibrate;
pub(crate) mod config;
pub mod doctor;
pub(crate) mod doctor_child;
pub(crate) mod doctor_guard;
pub(crate) mod doctor_tools;
pub mod evidence;
pub(crate) mod evidence_chart;
pub(crate) mod evidence_out;
pub(crate) mod evidence_summary;
pub(crate) mod evidence_svg;
pub(crate) mod evidence_time;
pub(crate) mod generate;
pub mod hangs;
pub(crate) mod idle_watch;
pub mod limits;
pub mod log_probe;
pub(crate) mod login_item;
pub mod park;
pub mod probe;
pub(crate) mod reap;
pub(crate) mod run;
pub(crate) mod run_enforce;
pub mod run_limited_report;
pub mod schema;
pub(crate) mod snapshot;
pub mod top;
pub(crate) mod watch;

#[cfg(test)]
mod one_reading_tests;

use anyhow::Result;

use crate::actions;
use crate::cli::{Cli, Command, GlobalArgs, ThresholdArgs};
use crate::config::{HangsSection, Settings};
use crate::core::hangs::MonitorConfig;
use crate::core::reading::Thresholds;
use crate::exit::ExitStatus;
use crate::output::Printer;
use crate::platform::replay::ReplaySource;
use crate::platform::{self, ProcessSource};

/// What every command gets: the printer, the global flags and the resolved settings.
#[derive(Debug)]
pub struct Ctx<'a> {
    pub printer: &'a Printer,
    pub global: &'a GlobalArgs,
    pub settings: Settings,
}

impl Ctx<'_> {
    /// `--warn/--crit` over config over defaults, validated together (probe, limits, watch).
    pub(crate) fn thresholds(&self, t: &ThresholdArgs) -> Result<Thresholds> {
        let (_, thresholds) =
            self.settings
                .probe
                .with_flags(t.warn, t.crit, self.settings.file.as_deref())?;
        Ok(thresholds)
    }

    /// The recorded snapshot (`--snapshot`), a fake `/proc` (`--proc-root`), or the live OS.
    pub(crate) fn source(&self) -> Result<Box<dyn ProcessSource>> {
        if let Some(path) = &self.global.snapshot {
            return Ok(Box::new(ReplaySource::load(path)?));
        }
        #[cfg(target_os = "linux")]
        if self.global.proc_root.is_some() || self.global.sys_root.is_some() {
            let mut roots = platform::linux::Roots::default();
            if let Some(p) = &self.global.proc_root {
                roots.proc = p.clone();
            }
            if let Some(s) = &self.global.sys_root {
                roots.sys = s.clone();
            }
            return Ok(Box::new(platform::linux::LinuxSource::new(roots)));
        }
        Ok(platform::native())
    }

    /// The system's memory-pressure source (`watch` sleeps on it, `limits` names it), or
    /// none when `[memory] pressure = "off"`.
    #[cfg(unix)]
    pub(crate) fn pressure_source(&self) -> platform::pressure::Pressure {
        use crate::config::PressureMode;
        if self.settings.memory.pressure.value == PressureMode::Off {
            return platform::pressure::Pressure::turned_off();
        }
        let proc_root = self
            .global
            .proc_root
            .clone()
            .unwrap_or_else(|| "/proc".into());
        platform::pressure::Pressure::system(&proc_root)
    }

    /// Whether this run replays a recording (then nothing is written to the state dir).
    pub(crate) fn replaying(&self) -> bool {
        self.global.snapshot.is_some()
    }

    /// The flag when the process table does not come from the live OS (`--snapshot`,
    /// `--proc-root`, `--sys-root`). Every command that acts refuses it: a decision must be
    /// made on what is really running, and the identity check before a signal always reads
    /// the live OS anyway (`platform::native_control`).
    pub(crate) fn redirected(&self) -> Option<&'static str> {
        if self.global.snapshot.is_some() {
            Some("--snapshot")
        } else if self.global.proc_root.is_some() {
            Some("--proc-root")
        } else if self.global.sys_root.is_some() {
            Some("--sys-root")
        } else {
            None
        }
    }
}

/// What a hang round decides with and acts by, from `[hangs]`: the same for `hangs` and
/// `watch`'s hang round (`actions::hang_round`), so here, where every command may look.
pub(crate) fn hang_round_settings(
    s: &HangsSection,
) -> (MonitorConfig, actions::recover::RecoverySettings) {
    let ms = |d: std::time::Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
    (
        MonitorConfig {
            allow: s.allow.value.clone(),
            deny: s.deny.value.clone(),
            cooldown_ms: ms(s.cooldown.value),
            min_gap_ms: ms(s.min_interval.value),
            resolve_path: platform::canonical_path,
        },
        actions::recover::RecoverySettings {
            grace: s.grace.value,
            uid: platform::current_uid(),
        },
    )
}

/// Run the command `cli` names (`headroom mcp` is a front end beside the CLI, started by
/// `headroom::run`; its tools come back here, one command each).
pub fn dispatch(cli: Cli, printer: &Printer) -> Result<ExitStatus> {
    let settings = Settings::load(cli.global.config.as_deref())?;
    dispatch_with(cli, printer, settings)
}

/// `dispatch` with the settings already loaded (`headroom mcp` loads them once per call,
/// for the tool's own use and the command's).
pub fn dispatch_with(cli: Cli, printer: &Printer, settings: Settings) -> Result<ExitStatus> {
    in_ctx(&cli, printer, settings, |ctx| command(ctx, &cli.command))
}

/// `f` in the context of `cli`: the settings loaded (a bad config file refuses every
/// command, exit 64) and the global flags with the command's own `--snapshot`.
pub fn with_ctx<R>(
    cli: &Cli,
    printer: &Printer,
    f: impl FnOnce(Ctx<'_>) -> Result<R>,
) -> Result<R> {
    let settings = Settings::load(cli.global.config.as_deref())?;
    in_ctx(cli, printer, settings, f)
}

/// `f` with `settings`, once they may steer `cli`'s command: a command that signals on
/// what the file says refuses a file someone else could have written; the others read it
/// with a warning.
fn in_ctx<R>(
    cli: &Cli,
    printer: &Printer,
    settings: Settings,
    f: impl FnOnce(Ctx<'_>) -> Result<R>,
) -> Result<R> {
    if steered_by_settings(&cli.command) {
        settings.trusted_for_action()?;
    } else if let Some(why) = &settings.untrusted {
        printer.warn(&format!(
            "{why}; read here only because this command signals nothing"
        ));
    }
    let mut global = cli.global.clone();
    global.snapshot = cli.command.snapshot().cloned();
    let ctx = Ctx {
        printer,
        global: &global,
        settings,
    };
    f(ctx)
}

fn command(ctx: Ctx<'_>, command: &Command) -> Result<ExitStatus> {
    match command {
        Command::Probe(a) => unknown_on_error(probe::run(&ctx, a)),
        Command::Limits(a) => unknown_on_error(limits::run(&ctx, a)),
        Command::LogProbe(a) => log_probe::run(&ctx, a),
        Command::Snapshot(a) => snapshot::run(&ctx, a),
        Command::Reap(a) => reap::run(&ctx, a),
        Command::Evidence(a) => evidence::run(&ctx, a),
        Command::IdleWatch(a) => idle_watch::run(&ctx, a),
        Command::Generate(a) => generate::run(&ctx, a),
        Command::Config(a) => config::run(&ctx, a),
        Command::Doctor(a) => doctor::run(&ctx, a),
        Command::Schema(a) => schema::run(&ctx, a),
        Command::LoginItem(a) => login_item::run(&ctx, a),
        Command::Watch(a) => watch::run(&ctx, a),
        Command::Hangs(a) => hangs::run(&ctx, a),
        Command::Run(a) => run::run(&ctx, a),
        Command::Top(a) => top::run(&ctx, a),
        Command::Park(a) => park::run(&ctx, a, park::Action::Park),
        Command::Wake(a) => park::run(&ctx, a, park::Action::Wake),
        Command::ParkTree(a) => park::run(&ctx, a, park::Action::ParkTree),
        Command::WakeTree(a) => park::run(&ctx, a, park::Action::WakeTree),
        Command::Calibrate(a) => calibrate::run(&ctx, a),
        // A front end, not a command: `headroom::run` serves it (`mcp::run`).
        Command::Mcp(_) => Err(anyhow::anyhow!(
            "`mcp` is not a command an MCP tool or a command can run"
        )),
    }
}

/// Whether `cmd` signals on what the config says (whom `reap` ends, what `watch` guards and
/// reaps, which apps `hangs` restarts): such a command refuses a config file someone else
/// could have written (`Settings::trusted_for_action`). Dry runs, replays and the commands
/// that take no target or limit from the file read it with a warning.
fn steered_by_settings(cmd: &Command) -> bool {
    match cmd {
        Command::Reap(a) => !a.dry_run,
        Command::Watch(a) => a.replay.snapshot.is_none(),
        Command::Hangs(a) => !a.dry_run && !a.events && a.observations.is_none(),
        _ => false,
    }
}

/// `probe` and `limits` speak the monitoring-plugin convention, where 2 is CRITICAL: an error
/// that kept the reading from being produced (an unreadable `--snapshot`, the process table,
/// the output file) is UNKNOWN, 3. A usage error stays 64 and a closed pipe stays quiet.
fn unknown_on_error(r: Result<ExitStatus>) -> Result<ExitStatus> {
    r.map_err(|e| {
        let said = crate::exit::report(&e);
        let keep = said.broken_pipe
            || e.downcast_ref::<crate::exit::UsageError>().is_some()
            || e.downcast_ref::<crate::exit::Failure>().is_some();
        if keep {
            return e;
        }
        crate::exit::Failure::NoReading(format!("{}; no reading (UNKNOWN)", said.message)).into()
    })
}
