//! The colours and line styles of the evidence SVG: the Okabe–Ito palette (made to stay
//! apart for the common colour-vision deficiencies), a colour fixed per limit source name
//! (never by the order sources appear), and a line style per series as well, so that no
//! series is told by its colour alone. The test below simulates deuteranopia and
//! protanopia (Machado, Oliveira & Fernandes 2009, severity 1) on these very constants and
//! requires ΔE (CIE76) of at least 10 between every two that can meet on the plot.

pub(super) use super::doc::Rgb;
use super::doc::Stroke;

// Okabe–Ito.
const BLACK: Rgb = Rgb(0x00, 0x00, 0x00);
const ORANGE: Rgb = Rgb(0xE6, 0x9F, 0x00);
const SKY_BLUE: Rgb = Rgb(0x56, 0xB4, 0xE9);
const BLUISH_GREEN: Rgb = Rgb(0x00, 0x9E, 0x73);
const YELLOW: Rgb = Rgb(0xF0, 0xE4, 0x42);
const BLUE: Rgb = Rgb(0x00, 0x72, 0xB2);
const VERMILLION: Rgb = Rgb(0xD5, 0x5E, 0x00);
const REDDISH_PURPLE: Rgb = Rgb(0xCC, 0x79, 0xA7);

pub(super) const USED: Rgb = BLUE;
pub(super) const ZOMBIES: Rgb = ORANGE;
pub(super) const CRITICAL: Rgb = Rgb(0x55, 0x55, 0x55);
pub(super) const WARNING: Rgb = Rgb(0xBB, 0xBB, 0xBB);
pub(super) const CLEANUP: Rgb = BLUISH_GREEN;
pub(super) const EMERGENCY: Rgb = YELLOW;
/// The strip above the plot over columns at or over the limit (it meets no line).
pub(super) const OVER: Rgb = VERMILLION;
/// A limit of a source this version does not know, or of a layout without the column.
pub(super) const UNKNOWN_LIMIT: Rgb = Rgb(0x77, 0x77, 0x77);
pub(super) const INK: Rgb = Rgb(0x22, 0x22, 0x22);
pub(super) const MUTED: Rgb = Rgb(0x55, 0x55, 0x55);
pub(super) const GRID: Rgb = Rgb(0xEB, 0xEB, 0xEB);
pub(super) const BAND: Rgb = Rgb(0xEE, 0xEE, 0xEE);
pub(super) const WHITE: Rgb = Rgb(0xFF, 0xFF, 0xFF);

pub(super) const USED_LINE: Stroke = Stroke {
    colour: USED,
    width: 2.5,
    dash: None,
};
pub(super) const ZOMBIES_LINE: Stroke = Stroke {
    colour: ZOMBIES,
    width: 2.0,
    dash: Some("5 2"),
};
pub(super) const CRITICAL_LINE: Stroke = Stroke {
    colour: CRITICAL,
    width: 1.5,
    dash: Some("8 4"),
};
pub(super) const WARNING_LINE: Stroke = Stroke {
    colour: WARNING,
    width: 1.5,
    dash: Some("3 3"),
};
pub(super) const PROJECTION_LINE: Stroke = Stroke {
    colour: USED,
    width: 2.0,
    dash: Some("7 4"),
};

/// The limit's line for `source`: a colour and a dash pattern per name, neither shared
/// with a series it can meet (the used line alone is solid). Sources of one OS may share
/// both with those of the other, which never meet them: per-uid and system-wide are
/// macOS's, cgroup-pids, threads-max and pid-max Linux's; rlimit-nproc is both's.
pub(super) fn limit_line(source: Option<&str>) -> Stroke {
    let (colour, dash) = match source {
        Some("per-uid") => (BLACK, "16 3"),
        Some("rlimit-nproc") => (VERMILLION, "12 3 3 3"),
        Some("system-wide") => (SKY_BLUE, "10 3 3 3 3 3"),
        Some("cgroup-pids") => (BLACK, "10 3 3 3 3 3"),
        Some("threads-max") => (SKY_BLUE, "2 3"),
        Some("pid-max") => (REDDISH_PURPLE, "16 3"),
        _ => (UNKNOWN_LIMIT, "6 2 2 2 2 2"),
    };
    let dash = Some(dash);
    Stroke {
        colour,
        width: 3.0,
        dash,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Machado et al. 2009, severity 1.0, applied to linear RGB.
    const DEUTERANOPIA: [[f64; 3]; 3] = [
        [0.367_322, 0.860_646, -0.227_968],
        [0.280_085, 0.672_501, 0.047_413],
        [-0.011_820, 0.042_940, 0.968_881],
    ];
    const PROTANOPIA: [[f64; 3]; 3] = [
        [0.152_286, 1.052_583, -0.204_868],
        [0.114_503, 0.786_281, 0.099_216],
        [-0.003_882, -0.048_116, 1.051_998],
    ];
    const NORMAL: [[f64; 3]; 3] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

    fn linear(c: u8) -> f64 {
        let c = f64::from(c) / 255.0;
        if c <= 0.040_45 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    }

    /// CIE L*a*b* (D65) of `c` as seen through `m`.
    fn lab(c: Rgb, m: &[[f64; 3]; 3]) -> [f64; 3] {
        let l = [linear(c.0), linear(c.1), linear(c.2)];
        let s: Vec<f64> = m
            .iter()
            .map(|row| (row[0] * l[0] + row[1] * l[1] + row[2] * l[2]).clamp(0.0, 1.0))
            .collect();
        let x = 0.412_456_4 * s[0] + 0.357_576_1 * s[1] + 0.180_437_5 * s[2];
        let y = 0.212_672_9 * s[0] + 0.715_152_2 * s[1] + 0.072_175_0 * s[2];
        let z = 0.019_333_9 * s[0] + 0.119_192_0 * s[1] + 0.950_304_1 * s[2];
        let f = |t: f64| {
            if t > 216.0 / 24_389.0 {
                t.cbrt()
            } else {
                (24_389.0 / 27.0 * t + 16.0) / 116.0
            }
        };
        let (fx, fy, fz) = (f(x / 0.950_47), f(y), f(z / 1.088_83));
        [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
    }

    fn delta_e(a: Rgb, b: Rgb, m: &[[f64; 3]; 3]) -> f64 {
        let (p, q) = (lab(a, m), lab(b, m));
        ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
    }

    const MACOS: [&str; 2] = ["per-uid", "system-wide"];
    const LINUX: [&str; 3] = ["cgroup-pids", "threads-max", "pid-max"];

    /// Everything drawn on the plot that another series can cross or touch: the lines (a
    /// limit per source, the unknown one included) and the cleanup markers, which sit on
    /// the used line. Left out, as they meet nothing: the projection (the used series'
    /// own continuation), the over-limit strip (above the plot), unread ticks (below it).
    fn meeting() -> Vec<(String, Rgb)> {
        let mut v: Vec<(String, Rgb)> = vec![
            ("used".into(), USED_LINE.colour),
            ("zombies".into(), ZOMBIES_LINE.colour),
            ("critical".into(), CRITICAL_LINE.colour),
            ("warning".into(), WARNING_LINE.colour),
            ("cleanup".into(), CLEANUP),
            ("emergency".into(), EMERGENCY),
        ];
        for s in [
            "per-uid",
            "rlimit-nproc",
            "system-wide",
            "cgroup-pids",
            "threads-max",
            "pid-max",
            "?",
        ] {
            v.push((format!("limit {s}"), limit_line(Some(s)).colour));
        }
        v
    }

    fn other_os(a: &str, b: &str) -> bool {
        let os = |n: &str| {
            let n = n.strip_prefix("limit ").unwrap_or("");
            if MACOS.contains(&n) {
                1
            } else if LINUX.contains(&n) {
                2
            } else {
                0
            }
        };
        os(a) * os(b) == 2
    }

    /// Every two of `meeting()` that can meet: of one OS, or of either.
    fn pairs() -> Vec<((String, Rgb), (String, Rgb))> {
        let all = meeting();
        let mut v = Vec::new();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                if !other_os(&a.0, &b.0) {
                    v.push((a.clone(), b.clone()));
                }
            }
        }
        v
    }

    #[test]
    fn every_two_colours_that_can_meet_stay_apart_for_colour_blind_readers() {
        let mut close = Vec::new();
        for ((a, ca), (b, cb)) in pairs() {
            for (vision, m) in [
                ("normal", &NORMAL),
                ("deuteranopia", &DEUTERANOPIA),
                ("protanopia", &PROTANOPIA),
            ] {
                let d = delta_e(ca, cb, m);
                if d < 10.0 {
                    close.push(format!("{a} / {b} under {vision}: ΔE {d:.1}"));
                }
            }
        }
        assert!(close.is_empty(), "{close:#?}");
    }

    #[test]
    fn the_simulation_finds_what_the_old_palette_got_wrong() {
        // The control: the colours of the previous picture, used slots (#1F5FBF) against
        // the rlimit-nproc limit (#7B2CBF), were about 2.5 ΔE apart under deuteranopia.
        let d = delta_e(Rgb(0x1F, 0x5F, 0xBF), Rgb(0x7B, 0x2C, 0xBF), &DEUTERANOPIA);
        assert!(d < 10.0, "{d}");
        let d = delta_e(Rgb(0x1F, 0x5F, 0xBF), Rgb(0x7B, 0x2C, 0xBF), &NORMAL);
        assert!(d > 10.0, "{d}: apart for normal vision");
    }

    /// The line style of each series `meeting()` names (cleanups are shapes: none).
    fn style(name: &str) -> Option<Option<&'static str>> {
        Some(match name {
            "used" => USED_LINE.dash,
            "zombies" => ZOMBIES_LINE.dash,
            "critical" => CRITICAL_LINE.dash,
            "warning" => WARNING_LINE.dash,
            "cleanup" | "emergency" => return None,
            limit => limit_line(limit.strip_prefix("limit ").filter(|s| *s != "?")).dash,
        })
    }

    #[test]
    fn every_two_lines_that_can_meet_differ_in_style_as_well() {
        let mut same = Vec::new();
        for ((a, _), (b, _)) in pairs() {
            if let (Some(sa), Some(sb)) = (style(&a), style(&b)) {
                if sa == sb {
                    same.push(format!("{a} / {b}: {sa:?}"));
                }
            }
        }
        assert!(same.is_empty(), "told apart by colour alone: {same:#?}");
        // Control: across the two OSes, a style may repeat (they never meet).
        assert_eq!(style("limit per-uid"), style("limit pid-max"));
        assert!(other_os("limit per-uid", "limit pid-max"));
    }

    #[test]
    fn a_source_s_colour_is_its_name_s() {
        assert_eq!(limit_line(Some("rlimit-nproc")).colour, VERMILLION);
        assert_eq!(limit_line(Some("per-uid")).dash, Some("16 3"));
        assert_eq!(limit_line(Some("pid-max")).dash, Some("16 3"));
        assert_eq!(limit_line(None).colour, UNKNOWN_LIMIT);
        assert_eq!(limit_line(Some("bogus")).colour, UNKNOWN_LIMIT);
    }
}
