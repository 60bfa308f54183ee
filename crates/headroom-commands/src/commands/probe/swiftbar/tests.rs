//! The SwiftBar and xbar output against ports of their readers: per level, with hostile
//! names, and with each protocol's controls.

use std::collections::BTreeMap;

use super::*;
use crate::commands::probe::tests::at;

const SB: Host = Host::SwiftBar { dark: false };

/// One line as SwiftBar reads it (`MenuLineParameters.init(line:)`, `getParams`): the
/// title up to the first `|`; then `key=value`, a value bare to the next blank or
/// quoted by `"`/`'` to the same quote (a backslash kept with the character after it).
fn parse(line: &str) -> (String, BTreeMap<String, String>) {
    let Some((title, rest)) = line.split_once('|') else {
        return (line.to_string(), BTreeMap::new());
    };
    let chars: Vec<char> = rest.trim().chars().collect();
    let mut params = BTreeMap::new();
    let mut i = 0;
    loop {
        while i < chars.len() && matches!(chars[i], ' ' | '\t') {
            i += 1;
        }
        let start = i;
        while i < chars.len() && chars[i] != '=' {
            i += 1;
        }
        if i >= chars.len() {
            break;
        }
        let key: String = chars[start..i]
            .iter()
            .collect::<String>()
            .trim()
            .to_lowercase();
        i += 1;
        let mut value = String::new();
        if i < chars.len() && matches!(chars[i], '"' | '\'') {
            let q = chars[i];
            i += 1;
            let mut escaped = false;
            while i < chars.len() {
                let c = chars[i];
                i += 1;
                if escaped {
                    value.push('\\');
                    value.push(c);
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    break;
                } else {
                    value.push(c);
                }
            }
        } else {
            while i < chars.len() && !matches!(chars[i], ' ' | '\t') {
                value.push(chars[i]);
                i += 1;
            }
        }
        params.insert(key, value);
    }
    (title.trim_end().to_string(), params)
}

/// The parameters SwiftBar documents (its README's tables) that this output may use.
const KNOWN: &[&str] = &[
    "sfimage",
    "sfconfig",
    "color",
    "symbolize",
    "emojize",
    "tooltip",
    "bash",
    "param1",
    "param2",
    "param3",
    "param4",
    "terminal",
    "refresh",
];

/// `sfconfig` as SwiftBar reads it (`getSFConfig`: base64, then JSON with a
/// `renderingMode` it knows and `colors`): the colours.
fn sf_colours(config: &str) -> Vec<String> {
    const ABC: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    assert_eq!(config.len() % 4, 0, "{config}");
    let mut bits = Vec::new();
    for c in config.trim_end_matches('=').chars() {
        let v = ABC.find(c).unwrap_or_else(|| panic!("not base64: {c:?}"));
        bits.extend((0..6).rev().map(|i| (v >> i) & 1));
    }
    let bytes: Vec<u8> = bits
        .chunks_exact(8)
        .map(|b| b.iter().fold(0u8, |a, bit| (a << 1) | *bit as u8))
        .collect();
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert!(["Hierarchical", "Palette"].contains(&v["renderingMode"].as_str().unwrap()));
    v["colors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn base64_is_rfc_4648s() {
    for (plain, coded) in [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ] {
        assert_eq!(base64(plain.as_bytes()), coded, "{plain}");
    }
}

fn actions() -> Actions {
    Actions {
        program: Ok(PathBuf::from("/opt/homebrew/opt/headroom/bin/headroom")),
        chart: Some(PathBuf::from(
            "/Users/a/Library/Application Support/headroom/evidence.svg",
        )),
    }
}

const HOSTILE: &str = "ag|ency\n---\nx | bash=/bin/rm param1=-rf #[fg=red]\x1b[2J:fire:";

fn lines(out: &str) -> Vec<(String, BTreeMap<String, String>)> {
    assert!(out.ends_with('\n'), "{out}");
    out.lines().map(parse).collect()
}

#[test]
fn each_level_has_its_own_glyph_shape_and_colour_in_the_single_title_line() {
    let mut seen = Vec::new();
    for level in [
        Level::Normal,
        Level::Warning,
        Level::Critical,
        Level::Unknown,
    ] {
        let out = swiftbar(&at(level, "agency"), true, &actions(), SB);
        let ls = lines(&out);
        // The header is everything before the first `---`: one line, the figure.
        assert_eq!(ls[1].0, "---", "{out}");
        let (title, p) = &ls[0];
        assert_eq!(p["sfimage"], look(level).0);
        assert_eq!(p["color"], look(level).2);
        // The symbol coloured as SwiftBar decodes `sfconfig`, for a light and a dark bar.
        let light = &look(level).2[..7];
        assert_eq!(sf_colours(&p["sfconfig"]), [light.to_string()]);
        let dark = swiftbar(
            &at(level, "agency"),
            true,
            &actions(),
            Host::SwiftBar { dark: true },
        );
        let dark_colour = &look(level).2[8..];
        assert_eq!(
            sf_colours(&lines(&dark)[0].1["sfconfig"]),
            [dark_colour.to_string()]
        );
        // A light and a dark colour, both hex as SwiftBar's webColor reads them.
        let pair: Vec<&str> = p["color"].split(',').collect();
        assert_eq!(pair.len(), 2, "{}", p["color"]);
        assert!(pair.iter().all(|c| c.len() == 7 && c.starts_with('#')));
        assert!(p["tooltip"].starts_with(&format!("headroom: {}", level.as_str())));
        match level {
            Level::Unknown => assert_eq!(title, "?"),
            _ => assert!(title.ends_with('%'), "{title}"),
        }
        seen.push((p["sfimage"].clone(), p["color"].clone()));
    }
    let shapes: std::collections::BTreeSet<_> = seen.iter().map(|s| &s.0).collect();
    let colours: std::collections::BTreeSet<_> = seen.iter().map(|s| &s.1).collect();
    assert_eq!((shapes.len(), colours.len()), (4, 4), "{seen:?}");
}

#[test]
fn the_menu_has_usage_against_the_limit_eta_top_parent_and_actions() {
    let out = swiftbar(&at(Level::Warning, "agency"), true, &actions(), SB);
    let ls = lines(&out);
    let titles: Vec<&str> = ls.iter().map(|l| l.0.as_str()).collect();
    assert!(
        titles.contains(&"Warning: 56.3 % of the binding limit (rlimit-nproc)"),
        "{out}"
    );
    assert!(
        titles.contains(&"1,500 of 2,666 process slots used, 1,166 free"),
        "{out}"
    );
    assert!(
        titles.contains(&"ETA 13 min to the wall (+10.0 slots/min)"),
        "{out}"
    );
    assert!(
        titles.contains(&"2,038 zombies; most held by agency (pid 28979, 526 zombies)"),
        "{out}"
    );
    let by_title = |t: &str| &ls.iter().find(|l| l.0.starts_with(t)).unwrap().1;
    let reap = by_title("Reap dry run in Terminal");
    assert_eq!(reap["bash"], "/opt/homebrew/opt/headroom/bin/headroom");
    assert_eq!(
        (reap["param1"].as_str(), reap["param2"].as_str()),
        ("reap", "--dry-run")
    );
    assert_eq!(reap["terminal"], "true");
    let chart = by_title("Open the evidence chart");
    assert_eq!(chart["bash"], "/bin/sh");
    assert_eq!(chart["param1"], "-c");
    assert_eq!(chart["param2"], CHART_SCRIPT);
    assert_eq!(chart["param3"], "/opt/homebrew/opt/headroom/bin/headroom");
    // The space of "Application Support" survives: the value is quoted.
    assert_eq!(
        chart["param4"],
        "/Users/a/Library/Application Support/headroom/evidence.svg"
    );
    assert_eq!(chart["terminal"], "false");
    assert_eq!(by_title("Refresh")["refresh"], "true");
    for (title, p) in &ls {
        for k in p.keys() {
            assert!(KNOWN.contains(&k.as_str()), "`{k}` on `{title}`");
        }
    }
    // Without history or a log: said, and no chart to open.
    let none = Actions {
        chart: None,
        ..actions()
    };
    let out = swiftbar(&at(Level::Warning, "agency"), false, &none, SB);
    assert!(
        out.contains("No ETA: trend off (--no-history or --snapshot) |"),
        "{out}"
    );
    assert!(out.contains("No evidence log yet"), "{out}");
    assert!(!out.contains("evidence --svg"), "{out}");
}

#[test]
fn a_hostile_name_stays_text_on_its_own_line() {
    for level in [
        Level::Normal,
        Level::Warning,
        Level::Critical,
        Level::Unknown,
    ] {
        let plain = swiftbar(&at(level, "agency"), true, &actions(), SB);
        let out = swiftbar(&at(level, HOSTILE), true, &actions(), SB);
        let (pl, ls) = (lines(&plain), lines(&out));
        assert_eq!(pl.len(), ls.len(), "no line added:\n{out}");
        assert!(!out.contains('\x1b'), "{out}");
        for ((pt, pp), (t, p)) in pl.iter().zip(&ls) {
            assert_eq!(pp, p, "the parameters of `{t}` are ours alone");
            if pt != t {
                assert!(
                    t.contains("ag\\u{7c}ency\\n---\\nx \\u{7c} bash=/bin/rm"),
                    "{t}"
                );
                assert!(t.contains("#[fg=red]\\u{1b}[2J:fire:"), "{t}");
                assert_eq!(p["symbolize"], "false");
                assert_eq!(p["emojize"], "false");
            }
        }
    }
    // Control: the name as it comes, unescaped, would end the title and add an action
    // and lines.
    let raw = format!("{HOSTILE} | symbolize=false");
    assert_eq!(raw.lines().count(), 3);
    assert!(parse(raw.lines().nth(2).unwrap()).1.contains_key("bash"));
    assert!(title_text(HOSTILE).lines().count() == 1 && !title_text(HOSTILE).contains('|'));
}

#[test]
fn parameter_values_are_quoted_or_refused_as_swiftbar_reads_them() {
    for v in [
        "/opt/homebrew/bin/headroom",
        "/a b/c",
        "/it's here",
        "/say \"x\"",
    ] {
        let written = param_value(v).unwrap();
        let (_, p) = parse(&format!("t | k={written} next=1"));
        assert_eq!(p["k"], v, "{written}");
        assert_eq!(p["next"], "1");
    }
    for v in ["", "/a\nb", "/a\\b", "/both ' and \""] {
        assert_eq!(param_value(v), None, "{v:?}");
    }
    // A path that cannot be written leaves the actions out and says why.
    let odd = Actions {
        program: Ok(PathBuf::from("/x/it's \"odd\"/headroom")),
        chart: None,
    };
    let out = swiftbar(&at(Level::Normal, "agency"), true, &odd, SB);
    assert!(out.contains("No actions: headroom's path"), "{out}");
    assert!(!out.contains("bash="), "{out}");
    let gone = Actions {
        program: Err("cannot find headroom's own executable".into()),
        chart: None,
    };
    let out = swiftbar(&at(Level::Normal, "agency"), true, &gone, SB);
    assert!(
        out.contains("No actions: cannot find headroom's own executable |"),
        "{out}"
    );
}

/// One line as xbar reads it (`parseParams`, `parseParamStr`): the title up to the
/// first `|`; a value to the next blank, or from `="` / `='` to the same quote; an
/// unknown key is an error that fails the whole output.
fn xbar_parse(line: &str) -> Result<(String, BTreeMap<String, String>), String> {
    let Some((title, mut s)) = line.split_once('|') else {
        return Ok((line.to_string(), BTreeMap::new()));
    };
    let mut params = BTreeMap::new();
    loop {
        s = s.trim();
        if s.is_empty() {
            return Ok((title.to_string(), params));
        }
        let i = s.find('=').ok_or("malformed parameters: missing equals")?;
        let (mut split, mut end_str) = ("=".to_string(), " ".to_string());
        if let Some(q @ ('"' | '\'')) = s[i + 1..].chars().next() {
            end_str = q.to_string();
            split = format!("={q}");
        }
        let offset = i + split.len();
        let key = &s[..i];
        let value_part = &s[offset..];
        let end = value_part
            .find(&end_str)
            .or_else(|| value_part.find('|'))
            .map_or(s.len(), |e| e + offset);
        let known = [
            "disabled",
            "key",
            "href",
            "color",
            "font",
            "size",
            "shell",
            "bash",
            "templateImage",
            "image",
            "terminal",
            "refresh",
            "dropdown",
            "length",
            "trim",
            "alternate",
            "emojize",
            "ansi",
        ];
        let param_n = key
            .strip_prefix("param")
            .is_some_and(|n| n.parse::<usize>().is_ok());
        if !known.contains(&key) && !param_n {
            return Err(format!("unknown parameter: {key}"));
        }
        if key == "color" {
            let v = &s[offset..end];
            let hex =
                v.len() == 7 && v.starts_with('#') && v[1..].bytes().all(|b| b.is_ascii_hexdigit());
            if !hex {
                return Err(format!("invalid hex format \"{v}\""));
            }
        }
        params.insert(key.to_string(), s[offset..end].to_string());
        if end + 1 > s.len() {
            return Ok((title.to_string(), params));
        }
        s = &s[end + 1..];
    }
}

fn xbar_lines(out: &str) -> Vec<(String, BTreeMap<String, String>)> {
    out.lines()
        .map(|l| xbar_parse(l).unwrap_or_else(|e| panic!("xbar refuses `{l}`: {e}")))
        .collect()
}

#[test]
fn the_xbar_flavour_keeps_to_xbar_parameters_with_a_glyph_of_its_own_per_level() {
    let mut glyphs = Vec::new();
    for level in [
        Level::Normal,
        Level::Warning,
        Level::Critical,
        Level::Unknown,
    ] {
        for dark in [false, true] {
            let host = Host::Xbar { dark };
            let plain = swiftbar(&at(level, "agency"), true, &actions(), host);
            let ls = xbar_lines(&plain);
            let (_, glyph, pair) = look(level);
            let colour = if dark { &pair[8..] } else { &pair[..7] };
            assert_eq!(ls[0].1["color"], colour, "{plain}");
            assert!(ls[0].0.starts_with(&format!("{glyph} ")), "{plain}");
            assert_eq!(ls[1].0.trim(), "---");
            let reap = ls.iter().find(|l| l.0.starts_with("Reap dry run")).unwrap();
            assert_eq!(reap.1["bash"], "/opt/homebrew/opt/headroom/bin/headroom");
            assert_eq!(reap.1["param2"], "--dry-run");
            let chart = ls
                .iter()
                .find(|l| l.0.starts_with("Open the evidence"))
                .unwrap();
            assert_eq!(chart.1["param2"], CHART_SCRIPT);
            assert_eq!(
                chart.1["param4"],
                "/Users/a/Library/Application Support/headroom/evidence.svg"
            );
            // A hostile name: the same lines, the same parameters, text kept as text.
            let out = swiftbar(&at(level, HOSTILE), true, &actions(), host);
            let hs = xbar_lines(&out);
            assert_eq!(hs.len(), ls.len(), "{out}");
            for ((_, pp), (t, p)) in ls.iter().zip(&hs) {
                assert_eq!(pp, p, "{t}");
                if t == "---" {
                    continue;
                }
                assert_eq!(
                    (p["emojize"].as_str(), p["ansi"].as_str()),
                    ("false", "false")
                );
            }
        }
        glyphs.push(look(level).1);
    }
    glyphs.sort_unstable();
    glyphs.dedup();
    assert_eq!(glyphs.len(), 4);
    // Control: SwiftBar's own output is refused by xbar, which is why xbar has its own.
    let sb = swiftbar(&at(Level::Normal, "agency"), true, &actions(), SB);
    let e = xbar_parse(sb.lines().next().unwrap()).unwrap_err();
    assert_eq!(e, "invalid hex format \"#1a7f37,#3fb950\"");
    let e = xbar_parse("t | sfimage=checkmark.circle").unwrap_err();
    assert_eq!(e, "unknown parameter: sfimage");
}
