//! `headroom reap`: one cleanup (`actions::cleanup`: decide about every parent holding the
//! user's zombies, terminate the approved ones, re-sample, verify that their zombies are
//! gone) on `reap`'s plan, reported. Safe enough to run unattended: every decision is
//! `core::policy`'s, every signal identity-checked.

use anyhow::{Context, Result};

use crate::actions::cleanup::{Cleanup, execute, record};
use crate::actions::reap_report::{ReapReport, TargetReport};
use crate::cli::ReapArgs;
use crate::commands::Ctx;
use crate::core::reap_plan::ReapPlan;
use crate::core::snapshot::Detail;
use crate::exit::ExitStatus;

/// `reap`'s plan: its flags over the settings (`config::reap_plan`).
pub(crate) fn plan(ctx: &Ctx<'_>, flags: Option<&ReapArgs>, dry_run: bool) -> Result<ReapPlan> {
    crate::config::reap_plan(&ctx.settings, flags, ctx.redirected(), dry_run)
}

pub(crate) fn run(ctx: &Ctx<'_>, args: &ReapArgs) -> Result<ExitStatus> {
    let plan = plan(ctx, Some(args), args.dry_run)?;
    for w in &plan.warnings {
        ctx.printer.warn(w);
    }
    let source = ctx.source()?;
    let snap = source
        .snapshot(Detail::Full)
        .context("cannot read the process table")?;
    let Cleanup { report, rows } = execute(
        ctx.printer,
        ctx.replaying(),
        source.as_ref(),
        &snap,
        &plan,
        !ctx.printer.is_json(),
    )?;
    // The evidence row is evidence of the cleanup, not the cleanup: failing to keep it is
    // said, and the report and the exit stay the action's.
    if let Err(e) = record(&rows) {
        ctx.printer.warn(&format!(
            "{}; this cleanup is not in the evidence log",
            crate::said_once(&e)
        ));
    }
    let status = if report.targets.iter().all(TargetReport::settled) {
        ExitStatus::Ok
    } else {
        ExitStatus::Unhappy
    };
    finish(ctx, &report, status)
}

fn finish(ctx: &Ctx<'_>, report: &ReapReport, status: ExitStatus) -> Result<ExitStatus> {
    if ctx.printer.is_json() {
        ctx.printer.json_value(report)?;
    } else {
        ctx.printer.text(&report.human_results())?;
    }
    Ok(status)
}

#[cfg(test)]
mod plan_tests;
