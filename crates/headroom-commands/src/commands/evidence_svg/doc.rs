//! A small SVG writer: the elements the evidence picture uses, every text through the one
//! sanitizer and then made XML-safe (characters XML 1.0 forbids, such as U+FFFE and U+FFFF,
//! become a visible `\u{…}` escape; `&`, `<`, `>` and quotes become entities), so the
//! document is well-formed whatever a log holds. Coordinates to 0.1 px.

use std::fmt::Write as _;

/// A colour of the drawing (the palette names the ones used).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Rgb(pub(super) u8, pub(super) u8, pub(super) u8);

impl Rgb {
    pub(super) fn hex(self) -> String {
        format!("#{:02X}{:02X}{:02X}", self.0, self.1, self.2)
    }
}

use crate::sanitize::sanitize;

/// A character XML 1.0 allows in text (`Char`, less the controls the sanitizer escapes).
fn xml_char(c: char) -> bool {
    matches!(c, '\u{9}' | '\u{A}' | '\u{D}' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// `s` as XML text: sanitized, XML-invalid characters escaped, markup characters as
/// entities.
pub(super) fn text(s: &str) -> String {
    let s = sanitize(s);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if !xml_char(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// A coordinate to 0.1 px, without a needless `.0`.
pub(super) fn n(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// How a line is drawn.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stroke {
    pub(super) colour: Rgb,
    pub(super) width: f64,
    pub(super) dash: Option<&'static str>,
}

impl Stroke {
    pub(super) fn solid(colour: Rgb, width: f64) -> Self {
        Self {
            colour,
            width,
            dash: None,
        }
    }

    fn attrs(&self) -> String {
        let mut a = format!(
            r#"fill="none" stroke="{}" stroke-width="{}" stroke-linejoin="round""#,
            self.colour.hex(),
            n(self.width)
        );
        if let Some(d) = self.dash {
            let _ = write!(a, r#" stroke-dasharray="{d}""#);
        }
        a
    }
}

/// Horizontal anchor of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Anchor {
    Start,
    Middle,
    End,
}

/// The document being written.
#[derive(Debug)]
pub(super) struct Doc {
    pub(super) out: String,
}

impl Doc {
    /// An SVG of `w` × `h` px with its `<title>` and `<desc>` (what a screen reader, or a
    /// bug tracker's preview, says about it).
    pub(super) fn new(w: f64, h: f64, title: &str, desc: &str) -> Self {
        let mut out = String::with_capacity(64 * 1024);
        let _ = writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-labelledby="title desc" font-family="sans-serif">"#,
            w = n(w),
            h = n(h)
        );
        let _ = writeln!(out, r#"<title id="title">{}</title>"#, text(title));
        let _ = writeln!(out, r#"<desc id="desc">{}</desc>"#, text(desc));
        Self { out }
    }

    pub(super) fn finish(mut self) -> String {
        self.out.push_str("</svg>\n");
        self.out
    }

    pub(super) fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: Rgb, class: &str) {
        let _ = writeln!(
            self.out,
            r#"<rect class="{class}" x="{}" y="{}" width="{}" height="{}" fill="{}"/>"#,
            n(x),
            n(y),
            n(w.max(0.0)),
            n(h.max(0.0)),
            fill.hex()
        );
    }

    pub(super) fn frame(&mut self, x: f64, y: f64, w: f64, h: f64, stroke: Rgb) {
        let _ = writeln!(
            self.out,
            r#"<rect class="plot" x="{}" y="{}" width="{}" height="{}" fill="none" stroke="{}" stroke-width="1"/>"#,
            n(x),
            n(y),
            n(w),
            n(h),
            stroke.hex()
        );
    }

    pub(super) fn line(&mut self, a: (f64, f64), b: (f64, f64), s: Stroke) {
        self.polyline(&[a, b], s, "");
    }

    /// A polyline; `class` names the series (tests read it back by that name).
    pub(super) fn polyline(&mut self, pts: &[(f64, f64)], s: Stroke, class: &str) {
        if pts.len() < 2 {
            return;
        }
        let mut p = String::with_capacity(pts.len() * 12);
        for (i, (x, y)) in pts.iter().enumerate() {
            if i > 0 {
                p.push(' ');
            }
            let _ = write!(p, "{},{}", n(*x), n(*y));
        }
        let class = if class.is_empty() {
            String::new()
        } else {
            format!(r#"class="{class}" "#)
        };
        let _ = writeln!(self.out, r#"<polyline {class}points="{p}" {}/>"#, s.attrs());
    }

    pub(super) fn circle(&mut self, c: (f64, f64), r: f64, fill: Rgb, class: &str) {
        let _ = writeln!(
            self.out,
            r#"<circle class="{class}" cx="{}" cy="{}" r="{}" fill="{}"/>"#,
            n(c.0),
            n(c.1),
            n(r),
            fill.hex()
        );
    }

    /// A filled shape with an outline (a marker that reads on any background).
    pub(super) fn polygon(&mut self, pts: &[(f64, f64)], fill: Rgb, outline: Rgb, class: &str) {
        let p: Vec<String> = pts
            .iter()
            .map(|(x, y)| format!("{},{}", n(*x), n(*y)))
            .collect();
        let _ = writeln!(
            self.out,
            r#"<polygon class="{class}" points="{}" fill="{}" stroke="{}" stroke-width="1"/>"#,
            p.join(" "),
            fill.hex(),
            outline.hex()
        );
    }

    /// A text at (x, y) — its baseline, or its middle when `middle` — in `px` pixels.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn text(
        &mut self,
        x: f64,
        y: f64,
        px: f64,
        anchor: Anchor,
        fill: Rgb,
        s: &str,
        rotate: bool,
        class: &str,
    ) {
        let a = match anchor {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        };
        let rot = if rotate {
            format!(r#" transform="rotate(-90 {} {})""#, n(x), n(y))
        } else {
            String::new()
        };
        let _ = writeln!(
            self.out,
            r#"<text class="{class}" x="{}" y="{}" font-size="{}" text-anchor="{a}" fill="{}"{rot}>{}</text>"#,
            n(x),
            n(y),
            n(px),
            fill.hex(),
            text(s)
        );
    }
}

/// The width a text of `s` takes at `px` pixels, estimated on the wide side (DejaVu Sans,
/// what librsvg falls back to, sets digits 0.64 em wide).
pub(super) fn text_width(s: &str, px: f64) -> f64 {
    s.chars()
        .map(|c| match c {
            'i' | 'l' | 'j' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | ' ' => 0.34,
            'm' | 'w' | 'M' | 'W' | '%' | '@' => 0.95,
            c if c.is_ascii_uppercase() => 0.72,
            _ => 0.64,
        })
        .sum::<f64>()
        * px
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_well_formed_whatever_the_log_holds() {
        assert_eq!(text("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
        assert_eq!(text("x\u{FFFE}y\u{FFFF}"), "x\\u{fffe}y\\u{ffff}");
        assert_eq!(
            text("per-uid\n\u{1b}]8;;x\u{7}"),
            "per-uid\\n\\u{1b}]8;;x\\u{7}"
        );
        assert_eq!(text("\u{202e}abc"), "\\u{202e}abc");
        assert_eq!(
            text("naïve 🦀"),
            "naïve 🦀",
            "control: ordinary text as it is"
        );
        assert_eq!(n(1.25), "1.3");
        assert_eq!(n(3.0), "3");
    }
}
