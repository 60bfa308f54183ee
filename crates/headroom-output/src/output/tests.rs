use super::*;

#[test]
fn long_words_are_clipped_and_short_ones_kept() {
    let long = "x".repeat(100_000);
    let msg = format!("invalid value `{long}` for `--limit`");
    let clipped = clip_words(&msg);
    assert!(clipped.len() < 300, "{}", clipped.len());
    assert!(clipped.contains("…`"), "{clipped}");
    assert!(clipped.ends_with("for `--limit`"));
    // Control: a message of ordinary words is returned as it was.
    let short = "state directory `/tmp/x` is not a directory";
    assert_eq!(clip_words(short), short);
    let exactly = "y".repeat(CLIP_CHARS);
    assert_eq!(clip_words(&exactly), exactly.as_str());
    assert_eq!(clip_words(&format!("{exactly}z")), format!("{exactly}…"));
    // Multibyte characters are cut on a character boundary.
    assert_eq!(clip_words(&"é".repeat(300)).chars().count(), CLIP_CHARS + 1);
}

#[test]
fn byte_rounding_keeps_the_half_and_carries_into_the_next_unit() {
    assert_eq!(human_bytes(3 << 29), "1.5 GiB");
    assert_eq!(human_bytes((3 << 29) - 1), "1.5 GiB");
    assert_eq!(human_bytes(1 << 30), "1 GiB");
    assert_eq!(human_bytes((1 << 30) + (1 << 20)), "1 GiB");
    assert_eq!(human_bytes((1 << 30) - (1 << 19)), "1 GiB");
    assert_eq!(human_bytes(1536 << 10), "1.5 MiB");
    assert_eq!(human_bytes(512 << 20), "512 MiB");
    assert_eq!(human_bytes(1000), "1000 B");
    assert_eq!(human_bytes(0), "0 B");
    assert_eq!(human_bytes((5 << 30) / 4), "1.2 GiB");
}

#[test]
fn colour_follows_the_flag_then_the_environment() {
    use std::ffi::OsString;
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| OsString::from(v))
        }
    };
    let auto = ColorChoice::Auto;
    assert!(colour_enabled(auto, true, &env(&[])));
    assert!(!colour_enabled(auto, false, &env(&[])));
    assert!(!colour_enabled(auto, true, &env(&[("NO_COLOR", "1")])));
    assert!(!colour_enabled(auto, true, &env(&[("TERM", "dumb")])));
    assert!(colour_enabled(
        auto,
        true,
        &env(&[("TERM", "xterm-256color")])
    ));
    assert!(colour_enabled(
        auto,
        false,
        &env(&[("CLICOLOR_FORCE", "1")])
    ));
    assert!(!colour_enabled(
        auto,
        false,
        &env(&[("CLICOLOR_FORCE", "0")])
    ));
    assert!(!colour_enabled(
        ColorChoice::Never,
        true,
        &env(&[("CLICOLOR_FORCE", "1")])
    ));
    assert!(colour_enabled(
        ColorChoice::Always,
        false,
        &env(&[("NO_COLOR", "1")])
    ));
}

#[test]
fn plurals() {
    assert_eq!(plural(1u64, "file"), "1 file");
    assert_eq!(plural(0u64, "file"), "0 files");
    assert_eq!(plural(2u64, "round"), "2 rounds");
    assert_eq!(plural(1u64, "process"), "1 process");
    assert_eq!(plural(5u64, "process"), "5 processes");
    assert_eq!(plural(1u32, "app"), "1 app");
    assert_eq!(plural(2u64, "idle process"), "2 idle processes");
    assert_eq!(plural(2u64, "child"), "2 children");
    assert_eq!(plural(0u64, "grace survivor"), "0 grace survivors");
    assert_eq!(plural(3869u64, "zombie"), "3,869 zombies");
    assert_eq!(plural(1u64, "zombie"), "1 zombie");
    assert_eq!(plural(1u64, "row"), "1 row");
    assert_eq!(plural(1u64, "sample"), "1 sample");
    assert_eq!(
        plural_verb(1u64, "parent", "holds", "hold"),
        "1 parent holds"
    );
    assert_eq!(
        plural_verb(3u64, "parent", "holds", "hold"),
        "3 parents hold"
    );
}

#[test]
fn formats() {
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(3869), "3,869");
    assert_eq!(thousands(1_234_567), "1,234,567");
    assert_eq!(human_duration(786.0), "13 min");
    assert_eq!(human_duration(4320.0), "1 h 12 min");
    assert_eq!(human_duration(7200.0), "2 h");
    assert_eq!(human_duration(59.4), "59 s");
    assert_eq!(human_duration(200_000.0), "over 2 days");
    assert_eq!(human_duration(-1.0), "unknown");
    assert_eq!(human_bytes(512 * 1024 * 1024), "512 MiB");
    assert_eq!(human_bytes(1536 * 1024 * 1024), "1.5 GiB");
    assert_eq!(human_bytes(100), "100 B");
    assert_eq!(bar(50.0, 10), "[#####-----]");
    assert_eq!(bar(150.0, 4), "[####]");
}
