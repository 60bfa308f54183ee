//! Escape what a process can put in its own name or arguments before it reaches a terminal:
//! control characters (cursor movement, colour, OSC sequences) and bidirectional overrides
//! that would make `agency` read as something else.

use std::borrow::Cow;

fn dangerous(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every dangerous character replaced by a visible `\u{..}` / `\n` escape.
pub fn sanitize(s: &str) -> Cow<'_, str> {
    if !s.chars().any(dangerous) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if dangerous(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn escapes_controls_and_bidi_but_keeps_plain_text() {
        assert!(matches!(
            sanitize("agency copilot"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(sanitize("a\x1b[31mb"), "a\\u{1b}[31mb");
        assert_eq!(sanitize("x\ny\t"), "x\\ny\\t");
        assert_eq!(sanitize("\u{202e}ycnega"), "\\u{202e}ycnega");
        assert_eq!(sanitize("naïve 🦀"), "naïve 🦀");
    }
}
