//! headroom keeps a developer's machine from running out of room: process slots (zombie
//! exhaustion of the per-user process limit), memory (a runaway process tree) and
//! responsiveness (apps macOS marks "not responding").
//!
//! Data flows one way: `platform` (read) → `core` (decide) → `actions` (act through
//! `platform`) → `commands` (report) → `output`.

pub mod actions;
pub mod cli;
pub mod commands;
pub mod config;
pub mod core;
pub mod exit;
pub mod fsio;
pub mod mcp;
pub mod output;
pub mod paths;
pub mod platform;
pub mod sanitize;

use std::ffi::OsString;

use clap::Parser;

use crate::output::Printer;

/// Parse `args`, run the command, and map the outcome onto the exit-code table.
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match cli::Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => return clap_error(&e),
    };
    let printer = Printer::new(cli.global.json, cli.global.quiet, cli.global.color);
    match commands::dispatch(cli, &printer) {
        Ok(code) => code,
        Err(e) => report_error(&e, &printer),
    }
}

/// Help and version go to stdout with 0; a usage error is one line on stderr with 64.
fn clap_error(e: &clap::Error) -> u8 {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            exit::OK
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            exit::USAGE
        }
        _ => {
            let rendered = e.render().to_string();
            let mut lines = rendered.lines();
            let first = lines.next().unwrap_or("invalid command line");
            let mut msg = first.strip_prefix("error: ").unwrap_or(first).to_string();
            // "… were not provided:" is followed by the missing arguments, indented: keep
            // them on the one line.
            if msg.ends_with(':') {
                let missing: Vec<&str> = lines
                    .take_while(|l| l.starts_with("  "))
                    .map(str::trim)
                    .collect();
                msg = format!("{msg} {}", missing.join(", "));
            }
            Printer::new(false, false, output::ColorChoice::Never)
                .error(&format!("{msg} (see `headroom --help`)"));
            exit::USAGE
        }
    }
}

fn report_error(e: &anyhow::Error, printer: &Printer) -> u8 {
    // A closed pipe (`headroom probe | head -1`) is not an error.
    if e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    }) {
        return exit::OK;
    }
    if let Some(w) = e.downcast_ref::<exit::WithCode>() {
        if !w.message.is_empty() {
            printer.error(&w.message);
        }
        return w.code;
    }
    printer.error(&said_once(e));
    if e.downcast_ref::<exit::UsageError>().is_some() {
        exit::USAGE
    } else if e.downcast_ref::<exit::Refused>().is_some()
        || e.downcast_ref::<core::parking::Refusal>().is_some()
    {
        exit::REFUSED
    } else {
        exit::ERROR
    }
}

/// The cause chain joined with `: `, each cause said once: an error whose message already
/// ends with its source's (`cannot read `x`: No such file…`, then the io::Error itself) would
/// otherwise print the OS error twice.
pub fn said_once(e: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if text.is_empty() || msg.ends_with(&text) || msg.contains(&format!("{text}: ")) {
            continue;
        }
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(&text);
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_already_in_its_context_is_said_once() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let e: anyhow::Error =
            platform::PlatformError::io("cannot read snapshot `missing.json`", io).into();
        let msg = said_once(&e);
        assert_eq!(msg.matches("not found").count(), 1, "{msg}");
        // Control: causes that differ are all said, outermost first.
        let e = anyhow::anyhow!("inner").context("middle").context("outer");
        assert_eq!(said_once(&e), "outer: middle: inner");
    }
}
