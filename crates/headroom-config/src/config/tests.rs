//! The config file's parsing, validation and origins.

use super::*;

#[test]
fn file_overrides_default_and_flag_overrides_file() {
    let mut s = Settings::parse("[probe]\nwarn = 60\n", Path::new("c.toml")).unwrap();
    assert_eq!(
        s.probe.warn,
        Sourced {
            value: 60.0,
            origin: Origin::File
        }
    );
    assert_eq!(
        s.probe.crit,
        Sourced {
            value: 75.0,
            origin: Origin::Default
        }
    );
    s.probe.warn = s.probe.warn.with_flag(Some(70.0));
    assert_eq!(s.probe.warn.origin, Origin::Flag);
}

#[test]
fn unknown_key_and_wrong_type_name_the_key_and_file() {
    let e = Settings::parse("[probe]\nwarm = 60\n", Path::new("/x/c.toml")).unwrap_err();
    let m = format!("{e:#}");
    assert!(
        m.contains("warm") && m.contains("/x/c.toml") && m.contains("line 2"),
        "{m}"
    );
    assert!(e.downcast_ref::<UsageError>().is_some());
    let e = Settings::parse("[probe]\nwarn = \"high\"\n", Path::new("c.toml")).unwrap_err();
    assert!(format!("{e:#}").contains("c.toml"));
    let e = Settings::parse("[bogus]\n", Path::new("c.toml")).unwrap_err();
    assert!(format!("{e:#}").contains("bogus"));
}

#[test]
fn reap_liveness_and_emergency_sections() {
    let t = "[reap]\nallow = [\"agency\", \"claude\"]\ngrace = \"5s\"\nmin_zombies = 50\n\
             [liveness]\nidle_threshold = \"3h\"\n[emergency]\nenabled = false\n";
    let s = Settings::parse(t, Path::new("c.toml")).unwrap();
    assert_eq!(s.reap.allow.value, vec!["agency", "claude"]);
    assert_eq!(s.reap.grace.value, Duration::from_secs(5));
    assert_eq!(
        s.reap.min_zombies,
        Sourced {
            value: 50,
            origin: Origin::File
        }
    );
    assert_eq!(s.reap.max_targets.origin, Origin::Default);
    assert_eq!(
        s.liveness.idle_threshold.value,
        Duration::from_secs(3 * 3600)
    );
    assert!(!s.emergency.enabled.value);
    for (bad, key) in [
        ("[reap]\ngrace = \"abc\"\n", "abc"),
        ("[reap]\nmin_zombies = 0\n", "reap.min_zombies"),
        ("[reap]\nmax_targets = -1\n", "max_targets"),
        ("[emergency]\nfree_pct = 120\n", "emergency.free_pct"),
        ("[liveness]\ncpu_active_pct = 0\n", "cpu_active_pct"),
    ] {
        let e = Settings::parse(bad, Path::new("c.toml")).unwrap_err();
        assert!(format!("{e:#}").contains(key), "{bad}: {e:#}");
        assert!(e.downcast_ref::<UsageError>().is_some());
    }
}

#[test]
fn hangs_section_sets_allow_deny_grace_and_cooldown() {
    let s = Settings::parse(
        "[hangs]\nallow = [\"com.apple.Safari\"]\ndeny = [\"/Applications/Precious.app\"]\n\
         grace = \"5s\"\ncooldown = \"2h\"\n",
        Path::new("c.toml"),
    )
    .unwrap();
    assert_eq!(s.hangs.allow.value, vec!["com.apple.Safari".to_string()]);
    assert_eq!(s.hangs.allow.origin, Origin::File);
    assert_eq!(
        s.hangs.deny.value,
        vec!["/Applications/Precious.app".to_string()]
    );
    assert_eq!(s.hangs.grace.value, Duration::from_secs(5));
    assert_eq!(s.hangs.cooldown.value, Duration::from_secs(7200));
    let m = Settings::parse("[hangs]\nmin_interval = \"20s\"\n", Path::new("c.toml")).unwrap();
    assert_eq!(m.hangs.min_interval.value, Duration::from_secs(20));
    for bad in ["500ms", "2m"] {
        let t = format!("[hangs]\nmin_interval = \"{bad}\"\n");
        let e = Settings::parse(&t, Path::new("c.toml")).unwrap_err();
        assert!(
            format!("{e:#}").contains("must be between 1s and 1m"),
            "{e:#}"
        );
    }
    let d = Settings::default();
    assert_eq!(d.hangs.cooldown.value, Duration::from_secs(3600));
    assert_eq!(d.hangs.grace.value, Duration::from_secs(3));
}

#[test]
fn hangs_section_rejects_unknown_keys_and_bad_values() {
    for (text, says) in [
        ("[hangs]\nalow = []\n", "alow"),
        (
            "[hangs]\ncooldown = \"10m\"\n",
            "cooldown `10m` must be between 1h and 1day",
        ),
        (
            "[hangs]\ngrace = \"soon\"\n",
            "grace `soon` is not a duration",
        ),
        ("[hangs]\ngrace = \"5m\"\n", "grace `5m` must be between"),
        (
            "[hangs]\nallow = [\"Applications/X.app\"]\n",
            "relative path",
        ),
        ("[hangs]\ndeny = [\"\"]\n", "deny entry"),
    ] {
        let e = Settings::parse(text, Path::new("/x/c.toml")).unwrap_err();
        let m = format!("{e:#}");
        assert!(m.contains(says) && m.contains("/x/c.toml"), "{text}: {m}");
        assert!(e.downcast_ref::<UsageError>().is_some());
    }
}

#[test]
fn memory_guards_parse_and_bad_ones_name_the_entry() {
    let t = "[[memory.guard]]\npattern = \"cargo\"\nlimit = \"8G\"\n[[memory.guard]]\npattern = \"node\"\nlimit = \"512\"\n";
    let s = Settings::parse(t, Path::new("c.toml")).unwrap();
    let g = &s.memory.guard.value;
    assert_eq!(
        (g[0].pattern.as_str(), g[0].limit_bytes),
        ("cargo", 8 << 30)
    );
    assert_eq!(g[1].limit_bytes, 512 << 20);
    let ok = Settings::parse("[memory]\ngrace = \"60s\"\n", Path::new("c.toml")).unwrap();
    assert_eq!(
        ok.memory.grace.value,
        Duration::from_secs(60),
        "the bound is allowed"
    );
    for (bad, says) in [
        (
            "[[memory.guard]]\npattern = \"\"\nlimit = \"1G\"\n",
            "memory.guard[0]",
        ),
        (
            "[[memory.guard]]\npattern = \"xy\"\nlimit = \"lots\"\n",
            "lots",
        ),
        ("[[memory.guard]]\npattern = \"xy\"\n", "limit"),
        (
            "[[memory.guard]]\npattern = \"xy\"\nlimit = \"512B\"\n",
            "too small a unit",
        ),
        ("[memory]\ngrace = \"61s\"\n", "memory.grace"),
        ("[memory]\ngrace = \"500000000000y\"\n", "at most 3650 days"),
    ] {
        let e = Settings::parse(bad, Path::new("c.toml")).unwrap_err();
        assert!(format!("{e:#}").contains(says), "{bad}: {e:#}");
    }
}

#[test]
fn missing_explicit_file_is_an_error() {
    let e = Settings::load(Some(Path::new("/nonexistent/headroom.toml"))).unwrap_err();
    assert!(format!("{e:#}").contains("/nonexistent/headroom.toml"));
    // Exit 64, as every other config error: the command line named it.
    assert!(e.downcast_ref::<UsageError>().is_some(), "{e:#}");
    // Control: a directory given as the file is not a usage error but an I/O one.
    let dir = std::env::temp_dir();
    let e = Settings::load(Some(&dir)).unwrap_err();
    assert!(e.downcast_ref::<UsageError>().is_none(), "{e:#}");
}

#[test]
fn config_lists_each_key_with_its_origin_and_every_key_reads_back() {
    let s = Settings::parse(
        "[reap]\ngrace = \"5s\"\n[hangs]\ncooldown = \"2h\"\n[memory]\nwarn_pct = 80\n",
        Path::new("c.toml"),
    )
    .unwrap();
    let (probe, _) = s.probe.with_flags(Some(40.0), None, None).unwrap();
    let s = Settings {
        probe,
        watch: s
            .watch
            .with_interval(Some(Duration::from_secs(30)))
            .unwrap(),
        ..s
    };
    let entries = s.entries();
    let origin = |k: &str| entries.iter().find(|e| e.key == k).map(|e| e.origin);
    assert_eq!(origin("probe.warn"), Some(Origin::Flag));
    assert_eq!(origin("probe.crit"), Some(Origin::Default));
    assert_eq!(origin("watch.interval"), Some(Origin::Flag));
    assert_eq!(origin("reap.grace"), Some(Origin::File));
    assert_eq!(origin("hangs.cooldown"), Some(Origin::File));
    assert_eq!(origin("memory.warn_pct"), Some(Origin::File));
    let from_file = entries.iter().filter(|e| e.origin == Origin::File).count();
    assert_eq!(from_file, 3, "only the keys the file set: {entries:?}");
    assert_eq!(entries.len(), 29);
    // Every key listed is the key a user writes: each shown value, written back into a
    // file under its key, reads as that value from the file.
    for e in Settings::default().entries() {
        // An optional key unset by default (`mcp.run_allow`) has no value to write back.
        if e.value.is_null() {
            continue;
        }
        let (section, key) = e.key.split_once('.').unwrap();
        let text = format!("[{section}]\n{key} = {}\n", e.value);
        let back = Settings::parse(&text, Path::new("c.toml")).unwrap_or_else(|err| {
            panic!("{} does not read back: {err:#}", e.key);
        });
        let again = back.entries().into_iter().find(|b| b.key == e.key).unwrap();
        assert_eq!(
            (again.value, again.origin),
            (e.value, Origin::File),
            "{text}"
        );
    }
}

#[test]
fn every_rule_refuses_naming_the_key_the_value_and_the_rule() {
    for (text, says) in [
        (
            "[probe]\nwarn = 0\n",
            "probe.warn `0` must be a percentage above 0 and at most 100",
        ),
        (
            "[probe]\ncrit = 150\n",
            "probe.crit `150` must be a percentage above 0 and at most 100",
        ),
        (
            "[reap]\nmin_zombies = 0\n",
            "reap.min_zombies `0` must be at least 1",
        ),
        (
            "[reap]\nmax_targets = 0\n",
            "reap.max_targets `0` must be at least 1",
        ),
        (
            "[reap]\ngrace = \"abc\"\n",
            "reap.grace `abc` is not a duration; write it like `90s`, `2h` or `500ms`",
        ),
        (
            "[liveness]\nidle_threshold = \"0s\"\n",
            "liveness.idle_threshold `0s` is zero; the duration must be positive",
        ),
        (
            "[liveness]\ncpu_active_pct = 101\n",
            "liveness.cpu_active_pct `101` must be a percentage above 0 and at most 100",
        ),
        (
            "[emergency]\nrecovery_pct = -1\n",
            "emergency.recovery_pct `-1` must be a percentage from 0 to 100",
        ),
        (
            "[watch]\ninterval = \"1ms\"\n",
            "watch.interval `1ms` is too short: at least 100ms",
        ),
        (
            "[watch]\ninterval = \"2days\"\n",
            "watch.interval `2days` is too long: at most 24h",
        ),
        (
            "[hangs]\ngrace = \"50ms\"\n",
            "hangs.grace `50ms` must be between 100ms and 1m",
        ),
        (
            "[hangs]\ncooldown = \"2days\"\n",
            "hangs.cooldown `2days` must be between 1h and 1day",
        ),
        (
            "[hangs]\nallow = [\" com.x\"]\n",
            "hangs.allow entry ` com.x` must be a bundle id or an absolute bundle path",
        ),
        (
            "[hangs]\ndeny = [\"A/B.app\"]\n",
            "hangs.deny entry `A/B.app` is a relative path; use an absolute bundle path",
        ),
        (
            "[memory]\ngrace = \"61s\"\n",
            "memory.grace `61s` must be between 1ms and 1m",
        ),
        (
            "[memory]\npressure = \"on\"\n",
            "memory.pressure `on` must be \"auto\" or \"off\"",
        ),
        (
            "[memory]\nwarn_pct = 100\n",
            "memory.warn_pct `100` must be above 0 and below 100",
        ),
        (
            "[[memory.guard]]\npattern = \"cargo\"\nlimit = \"1G\"\n[[memory.guard]]\npattern = \" \"\nlimit = \"1G\"\n",
            "memory.guard[1] has an empty `pattern`, which would match nothing",
        ),
        (
            "[[memory.guard]]\npattern = \"cargo\"\nlimit = \"-1G\"\n",
            "memory.guard[0] `limit` `-1G` is negative; a size must be positive",
        ),
        // The one pattern rule (`core::patterns::check`), in every list of the file.
        (
            "[[memory.guard]]\npattern = \"cargo\"\nlimit = \"1G\"\n[[memory.guard]]\npattern = \"/\"\nlimit = \"1G\"\n",
            "memory.guard[1] `pattern` `/` is refused: a pattern of only `/` matches every path",
        ),
        (
            "[[memory.guard]]\npattern = \"*\"\nlimit = \"1G\"\n",
            "memory.guard[0] `pattern` `*` is refused: a one-character pattern matches almost every process",
        ),
        (
            "[[memory.guard]]\npattern = \".\"\nlimit = \"1G\"\n",
            "memory.guard[0] `pattern` `.` is refused: a one-character pattern matches almost every process",
        ),
        (
            "[[memory.guard]]\npattern = \"cargo*\"\nlimit = \"1G\"\n",
            "memory.guard[0] `pattern` `cargo*` is refused: patterns are plain substrings, not globs or regular expressions: `* ? [ ] | ^ $ \\` match only themselves",
        ),
        (
            "[reap]\nallow = [\"agency\", \"/\"]\n",
            "reap.allow pattern `/` is refused: a pattern of only `/` matches every path",
        ),
        (
            "[reap]\ndeny = [\"..\"]\n",
            "reap.deny pattern `..` is refused: a pattern needs a letter or a digit",
        ),
        (
            "[hangs]\nallow = [\"/\"]\n",
            "hangs.allow entry `/` is refused: a pattern of only `/` matches every path",
        ),
        (
            "[hangs]\nallow = [\"*\"]\n",
            "hangs.allow entry `*` is refused: a one-character pattern matches almost every process",
        ),
        (
            "[hangs]\ndeny = [\"com.*\"]\n",
            "hangs.deny entry `com.*` is refused: patterns are plain substrings, not globs or regular expressions: `* ? [ ] | ^ $ \\` match only themselves",
        ),
        (
            "[hangs]\ndeny = [\"/Applications\"]\n",
            "hangs.deny entry `/Applications` is not an app bundle path (`/Applications/Name.app`): an entry matches one app exactly, never a folder",
        ),
    ] {
        let e = Settings::parse(text, Path::new("/x/c.toml")).unwrap_err();
        assert_eq!(
            format!("{e:#}"),
            format!("config file `/x/c.toml`: {says}"),
            "{text}"
        );
        assert!(e.downcast_ref::<UsageError>().is_some(), "exit 64: {text}");
    }
    // The rules' boundaries are allowed: the refusals above are the rules, not any value.
    let edges = "[probe]\nwarn = 100\ncrit = 100\n[reap]\nmin_zombies = 1\n\
                 [emergency]\nfree_pct = 0\nrecovery_pct = 100\n[watch]\ninterval = \"100ms\"\n\
                 [hangs]\ngrace = \"100ms\"\ncooldown = \"1day\"\n[memory]\ngrace = \"1ms\"\n";
    // Controls for the pattern rule: real patterns in every list are accepted.
    let real = "[reap]\nallow = [\"agency\", \"/.config/agency/\"]\ndeny = [\"ab\"]\n\
                [hangs]\nallow = [\"com.x.y\", \"/Applications/Foo.app\"]\n\
                [[memory.guard]]\npattern = \"cargo\"\nlimit = \"1G\"\n";
    let s = Settings::parse(real, Path::new("c.toml")).unwrap();
    assert_eq!(s.memory.guard.value[0].pattern, "cargo");
    assert_eq!(s.reap.allow.value.len(), 2);
    Settings::parse(edges, Path::new("c.toml")).unwrap();
}

#[test]
fn flags_are_held_to_the_rules_of_the_keys_they_override() {
    let d = Settings::default();
    let e = d
        .probe
        .with_flags(Some(80.0), Some(70.0), None)
        .unwrap_err();
    assert!(e.0.contains("--warn `80` is above --crit `70`"), "{}", e.0);
    // Values the file set are named as its keys, with the file: no flag was typed.
    let f = Settings::parse("[probe]\nwarn = 80\ncrit = 60\n", Path::new("/x/c.toml")).unwrap();
    let e = f
        .probe
        .with_flags(None, None, Some(Path::new("/x/c.toml")))
        .unwrap_err();
    assert_eq!(
        e.0,
        "`[probe] warn = 80` is above `[probe] crit = 60` (config file `/x/c.toml`): \
         the warning threshold must not exceed the critical one"
    );
    // A flag over one side names that side as the flag, the other as the file's key.
    let e = f
        .probe
        .with_flags(Some(70.0), None, Some(Path::new("/x/c.toml")))
        .unwrap_err();
    assert!(
        e.0.starts_with("--warn `70` is above `[probe] crit = 60` (config file"),
        "{}",
        e.0
    );
    let e = d.probe.with_flags(None, Some(40.0), None).unwrap_err();
    assert!(
        e.0.starts_with("the default warn `50` is above --crit `40`:"),
        "{}",
        e.0
    );
    // Control: in order, from the file, it is accepted.
    let ok = Settings::parse("[probe]\nwarn = 60\ncrit = 80\n", Path::new("/x/c.toml")).unwrap();
    assert!(
        ok.probe
            .with_flags(None, None, Some(Path::new("/x/c.toml")))
            .is_ok()
    );
    // A file's warn above the default crit is fixed by a crit flag.
    let s = Settings::parse("[probe]\nwarn = 80\n", Path::new("c.toml")).unwrap();
    assert!(s.probe.with_flags(None, None, None).is_err());
    let (p, t) = s.probe.with_flags(None, Some(90.0), None).unwrap();
    assert_eq!((p.warn.origin, p.crit.origin), (Origin::File, Origin::Flag));
    assert_eq!((t.warn_pct, t.crit_pct), (80.0, 90.0));
    let e = d
        .watch
        .with_interval(Some(Duration::from_millis(5)))
        .unwrap_err();
    assert_eq!(e.0, "--interval `5ms` is too short: at least 100ms");
    let w = d.watch.with_interval(None).unwrap();
    assert_eq!(
        w.interval, d.watch.interval,
        "no flag keeps the file's value and origin"
    );
}

#[test]
fn a_value_of_the_wrong_type_names_the_file_the_key_and_what_was_expected() {
    let e = Settings::parse("[probe]\nwarn = \"fifty\"\n", Path::new("/x/c.toml")).unwrap_err();
    assert_eq!(
        format!("{e:#}"),
        "config file `/x/c.toml` line 2, key `probe.warn` (`warn = \"fifty\"`): \
         invalid type: string \"fifty\", expected a number"
    );
    assert!(e.downcast_ref::<UsageError>().is_some(), "exit 64");
    let e = Settings::parse("[reap]\nmin_zombies = 1.5\n", Path::new("c.toml")).unwrap_err();
    assert!(format!("{e:#}").contains("key `reap.min_zombies`"), "{e:#}");
    assert!(!format!("{e:#}").contains("u64"), "{e:#}");
    // Control: a number is accepted where a number is expected.
    assert!(Settings::parse("[probe]\nwarn = 50\n", Path::new("c.toml")).is_ok());
}
