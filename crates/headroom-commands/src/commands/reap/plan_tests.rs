use std::time::Duration;

use super::*;
use crate::core::patterns::Patterns;

fn reap_args(argv: &[&str]) -> ReapArgs {
    use clap::Parser;
    let mut full = vec!["headroom", "reap"];
    full.extend_from_slice(argv);
    match crate::cli::Cli::try_parse_from(full).map(|c| c.command) {
        Ok(crate::cli::Command::Reap(a)) => a,
        other => panic!("not reap args: {other:?}"),
    }
}

/// `watch`'s cleanup (no flags) is planned exactly as `reap` without flags, from the same
/// sections; a flag changes only what it names (the deny flag adds to the file's list).
#[test]
fn watch_without_flags_plans_what_reap_without_flags_plans() {
    let printer = crate::output::Printer::new(false, false, crate::output::ColorChoice::Never);
    let global = crate::cli::GlobalArgs::plain();
    let file = "[reap]\nallow = [\"agency\", \"claude\"]\ndeny = [\"keep\"]\nmin_zombies = 40\n\
                max_targets = 3\ngrace = \"4s\"\nspare_active_sessions = false\n\
                [liveness]\nidle_threshold = \"3h\"\ncpu_active_pct = 2\n\
                [emergency]\nenabled = false\nfree_pct = 7\n";
    let ctx = Ctx {
        printer: &printer,
        global: &global,
        settings: crate::config::Settings::parse(file, std::path::Path::new("c.toml")).unwrap(),
    };
    let watch = plan(&ctx, None, false).unwrap();
    let reap = plan(&ctx, Some(&reap_args(&[])), false).unwrap();
    assert_eq!(format!("{watch:?}"), format!("{reap:?}"));
    assert_eq!(watch.policy.min_zombies, 40);
    assert_eq!(watch.grace, Duration::from_secs(4));
    assert!(!watch.policy.spare_sessions && !watch.policy.emergency.enabled);
    assert!((watch.active_fraction - 0.02).abs() < 1e-12);
    // Control: flags reach reap's plan, and only the ones given.
    let flagged = plan(
        &ctx,
        Some(&reap_args(&["--min-zombies", "7", "--deny", "also"])),
        false,
    )
    .unwrap();
    assert_eq!(flagged.policy.min_zombies, 7);
    assert_eq!(flagged.policy.max_targets, 3);
    assert_eq!(
        format!("{:?}", flagged.policy.allow_deny.deny),
        format!(
            "{:?}",
            Patterns::new(&["keep".to_string(), "also".to_string()])
        )
    );
}
