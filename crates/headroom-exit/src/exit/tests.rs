use super::*;
use crate::core::reading::Level;
use crate::platform::Signal;

/// One of each variant that has a row of its own; `every_variant_is_listed` makes a new
/// variant fail to compile until it is added here (and so checked against the table) or,
/// like `Level`, to the rows it shares (`each_level_is_documented_by_the_row_of_its_code`).
fn one_of_each() -> Vec<ExitStatus> {
    vec![
        ExitStatus::Ok,
        ExitStatus::Unhappy,
        ExitStatus::Error,
        ExitStatus::Refused,
        ExitStatus::Usage,
        ExitStatus::RunFailed,
        ExitStatus::NotExecutable,
        ExitStatus::NotFound,
        ExitStatus::Child(42),
        ExitStatus::Signalled(15),
        ExitStatus::Interrupted,
        ExitStatus::Restart,
    ]
}

#[test]
fn every_variant_is_listed() {
    for s in one_of_each() {
        match s {
            ExitStatus::Ok
            | ExitStatus::Unhappy
            | ExitStatus::Error
            | ExitStatus::Refused
            | ExitStatus::Usage
            | ExitStatus::RunFailed
            | ExitStatus::NotExecutable
            | ExitStatus::NotFound
            | ExitStatus::Child(_)
            | ExitStatus::Signalled(_)
            | ExitStatus::Interrupted
            | ExitStatus::Restart => {}
            ExitStatus::Level(_) => unreachable!("a level shares the rows of its codes"),
        }
    }
}

#[test]
fn each_status_has_one_row_of_the_table_and_each_row_one_status() {
    use std::mem::discriminant;
    for s in one_of_each() {
        let rows = TABLE
            .iter()
            .filter(|(t, _)| discriminant(t) == discriminant(&s))
            .count();
        assert_eq!(rows, 1, "{s:?} has one row in the table");
    }
    assert_eq!(TABLE.len(), one_of_each().len(), "no row without a status");
    let codes: Vec<&str> = table().map(|(c, _)| c).collect();
    assert_eq!(
        codes,
        [
            "0", "1", "2", "3", "64", "75", "125", "126", "127", "0-255", "128+N", "130"
        ]
    );
    // A fixed code is its row's number; the passthrough rows are the ranges they say.
    for (s, _) in TABLE {
        match s {
            ExitStatus::Child(_) | ExitStatus::Signalled(_) => {}
            _ => assert_eq!(s.row(), s.code().to_string(), "{s:?}"),
        }
    }
}

#[test]
fn fixed_codes_are_the_documented_ones() {
    let codes: Vec<u8> = one_of_each().into_iter().map(ExitStatus::code).collect();
    assert_eq!(codes, [0, 1, 2, 3, 64, 125, 126, 127, 42, 143, 130, 75]);
}

#[test]
fn each_level_exits_with_its_monitoring_plugin_code() {
    let got: Vec<(Level, u8)> = [
        Level::Normal,
        Level::Warning,
        Level::Critical,
        Level::Unknown,
    ]
    .into_iter()
    .map(|l| (l, ExitStatus::from(l).code()))
    .collect();
    assert_eq!(
        got,
        [
            (Level::Normal, 0),
            (Level::Warning, 1),
            (Level::Critical, 2),
            (Level::Unknown, 3)
        ]
    );
}

const LEVELS: [Level; 4] = [
    Level::Normal,
    Level::Warning,
    Level::Critical,
    Level::Unknown,
];

#[test]
fn each_level_is_documented_by_the_row_of_its_code() {
    for l in LEVELS {
        let s = ExitStatus::from(l);
        assert_eq!(s.row(), s.code().to_string(), "{l:?}");
        let meaning = table()
            .find(|(row, _)| *row == s.row())
            .map(|(_, m)| m)
            .unwrap_or_default();
        let named = format!("probe/limits: level {}", l.as_str());
        assert!(meaning.contains(&named), "row {} names {named}", s.row());
    }
}

#[test]
fn a_critical_reading_is_its_level_not_an_error_and_an_unknown_one_not_a_refusal() {
    let critical = ExitStatus::from(Level::Critical);
    assert_eq!(critical, ExitStatus::Level(Level::Critical));
    assert_eq!(critical.code(), 2);
    assert_ne!(critical, ExitStatus::Error);
    let unknown = ExitStatus::from(Level::Unknown);
    assert_eq!(unknown, ExitStatus::Level(Level::Unknown));
    assert_eq!(unknown.code(), 3);
    assert_ne!(unknown, ExitStatus::Refused);
    assert!(ExitStatus::from(Level::Normal).is_success());
    assert!(!ExitStatus::from(Level::Warning).is_success());
    // Control: a real failure still says so, with the same numbers.
    let io = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
    let e: anyhow::Error = crate::platform::PlatformError::io("cannot read `x`", io).into();
    let r = report(&e);
    assert_eq!((r.status, r.status.code()), (ExitStatus::Error, 2));
    let r = report(&RefusedError("no".into()).into());
    assert_eq!((r.status, r.status.code()), (ExitStatus::Refused, 3));
    assert_eq!(Failure::NoReading("m".into()).status(), ExitStatus::Refused);
}

#[test]
fn doctor_exits_1_only_on_a_mismatch() {
    use crate::core::doctor::Agreement;
    assert_eq!(ExitStatus::from(Agreement::Agrees).code(), 0);
    assert_eq!(ExitStatus::from(Agreement::Mismatch).code(), 1);
}

#[test]
fn run_passes_the_command_status_through_and_a_signal_as_128_plus_n() {
    for c in 0..=u8::MAX {
        assert_eq!(ExitStatus::Child(c).code(), c);
    }
    assert!(ExitStatus::Child(0).is_success() && ExitStatus::Ok.is_success());
    assert!(!ExitStatus::Child(1).is_success() && !ExitStatus::Signalled(2).is_success());
    for n in 1..=127 {
        assert_eq!(i32::from(ExitStatus::Signalled(n).code()), 128 + n);
    }
    assert_eq!(ExitStatus::Signalled(9).code(), 137);
    assert_eq!(ExitStatus::Signalled(15).code(), 143);
    // Beyond what an exit status can carry it saturates, never wraps to a small code.
    assert_eq!(ExitStatus::Signalled(200).code(), 255);
    assert_eq!(ExitStatus::Signalled(i32::MAX).code(), 255);
}

#[test]
fn a_loop_stopped_by_sigint_is_interrupted_by_sigterm_ok_by_sighup_restarted_else_its_own() {
    let own = ExitStatus::Unhappy;
    assert_eq!(
        after_stop(Some(Signal::Int.number()), own),
        ExitStatus::Interrupted
    );
    assert_eq!(after_stop(Some(Signal::Int.number()), own).code(), 130);
    assert_eq!(after_stop(Some(Signal::Term.number()), own), ExitStatus::Ok);
    assert_eq!(
        after_stop(Some(Signal::Hup.number()), own),
        ExitStatus::Restart
    );
    assert_eq!(after_stop(Some(Signal::Hup.number()), own).code(), 75);
    assert_eq!(after_stop(None, own), own);
    assert_eq!(after_stop(None, ExitStatus::Ok), ExitStatus::Ok);
}

#[test]
fn a_cause_already_in_its_context_is_said_once() {
    let io = std::io::Error::from(std::io::ErrorKind::NotFound);
    let e: anyhow::Error =
        crate::platform::PlatformError::io("cannot read snapshot `missing.json`", io).into();
    let msg = said_once(&e);
    assert_eq!(msg.matches("not found").count(), 1, "{msg}");
    // Control: causes that differ are all said, outermost first.
    let e = anyhow::anyhow!("inner").context("middle").context("outer");
    assert_eq!(said_once(&e), "outer: middle: inner");
}

#[test]
fn run_summary_json_carries_the_number() {
    #[derive(serde::Serialize)]
    struct S {
        exit_code: ExitStatus,
    }
    let line = serde_json::to_string(&S {
        exit_code: ExitStatus::Signalled(9),
    })
    .unwrap();
    assert_eq!(line, r#"{"exit_code":137}"#);
    let schema = schemars::schema_for!(ExitStatus);
    let plain = schemars::schema_for!(u8);
    assert_eq!(schema.get("type"), plain.get("type"));
    assert_eq!(schema.get("maximum"), plain.get("maximum"));
}

#[test]
fn each_failure_exits_with_its_row_of_the_table() {
    let m = || "m".to_string();
    let codes: Vec<u8> = [
        Failure::Failed(m()),
        Failure::NoReading(m()),
        Failure::RunFailed(m()),
        Failure::NotExecutable(m()),
        Failure::NotFound(m()),
    ]
    .iter()
    .map(|f| f.status().code())
    .collect();
    assert_eq!(codes, [2, 3, 125, 126, 127]);
}

// The error document through the layers below `exit` that print it: the schema module's
// writer puts its `schema` and `type` first, and a capturing Printer keeps it as the value
// it prints as. They live here because the document is `exit`'s, which those layers may
// not name.
#[test]
fn a_document_is_printed_with_its_schema_first() {
    let line = crate::schema::to_line(&ErrorDocument::new("bad `x`", 2)).unwrap();
    assert!(
        line.starts_with(r#"{"schema":"headroom.error/1","type":"error","#),
        "{line}"
    );
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["exit_code"], 2);
}

#[test]
fn a_capturing_printer_keeps_what_it_would_print() {
    let (p, sink) = crate::output::Printer::capturing(None);
    assert!(p.is_json());
    p.json_value(&ErrorDocument::new("x", 2)).unwrap();
    p.warn("careful");
    p.error("broken");
    p.stderr_line("plain");
    let c = sink.lock().unwrap();
    // A report is kept as the value it prints as, not as text to parse back.
    assert!(c.stdout.is_empty());
    let want: serde_json::Value = serde_json::from_str(
        r#"{"schema":"headroom.error/1","type":"error","error":"x","exit_code":2}"#,
    )
    .unwrap();
    assert_eq!(c.report.as_ref().map(|r| &r.value), Some(&want));
    assert_eq!(c.stderr, ["warning: careful", "error: broken", "plain"]);
}
