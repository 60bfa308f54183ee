//! Fitting a line to a screen's width without the terminal wrapping it: cut (a table row) or
//! wrapped under its own column (prose). The width is `platform::screen_width`'s.

/// Characters a terminal shows of `s`: ANSI colour sequences (`ESC [ … m`) take none.
pub(crate) fn visible_len(s: &str) -> usize {
    let mut n = 0;
    let mut esc = false;
    for c in s.chars() {
        match (esc, c) {
            (false, '\x1b') => esc = true,
            (true, 'm') => esc = false,
            (true, _) => {}
            (false, _) => n += 1,
        }
    }
    n
}

/// `s` cut to `w` visible characters, the last one `…` when anything was cut (a colour left
/// open is closed).
pub fn cut(s: &str, w: usize) -> String {
    if visible_len(s) <= w {
        return s.to_string();
    }
    let mut out = String::new();
    let mut n = 0;
    let mut esc = false;
    let mut coloured = false;
    for c in s.chars() {
        if esc {
            out.push(c);
            esc = c != 'm';
            continue;
        }
        if c == '\x1b' {
            esc = true;
            coloured = true;
            out.push(c);
            continue;
        }
        if n + 1 >= w {
            break;
        }
        out.push(c);
        n += 1;
    }
    out.push('…');
    if coloured {
        out.push_str("\x1b[0m");
    }
    out
}

/// Prose lines wrapped at word boundaries to `w`, continuation lines indented by `indent`.
pub fn wrap(line: &str, w: usize, indent: usize) -> Vec<String> {
    if visible_len(line) <= w {
        return vec![line.to_string()];
    }
    let lead = line.len() - line.trim_start().len();
    let mut out = Vec::new();
    let mut cur = line[..lead].to_string();
    let mut cur_len = lead;
    let pad = " ".repeat(indent.min(w / 2));
    for word in line[lead..].split(' ') {
        let wl = visible_len(word);
        let fresh = cur_len == lead || (cur_len == pad.len() && !out.is_empty());
        if !fresh && cur_len + 1 + wl > w {
            out.push(std::mem::replace(&mut cur, pad.clone()));
            cur_len = pad.len();
        }
        if !(cur_len == lead || (cur_len == pad.len() && !out.is_empty())) {
            cur.push(' ');
            cur_len += 1;
        }
        cur.push_str(word);
        cur_len += wl;
    }
    out.push(cur);
    // A single word longer than the width is cut, never left to wrap.
    out.into_iter().map(|l| cut(&l, w)).collect()
}

/// Every line of `text` wrapped to `w` with a hanging indent at its second column (after the
/// first run of two spaces past its first word), so a `name  value` list stays a list.
pub fn wrap_all(text: &str, w: usize) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let lead = line.len() - line.trim_start().len();
        let indent = line[lead..]
            .find("  ")
            .map(|i| {
                let rest = &line[lead + i..];
                lead + i + (rest.len() - rest.trim_start().len())
            })
            .unwrap_or(lead + 2);
        for l in wrap(line, w, indent) {
            out.push_str(&l);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_cut_and_wrapped_to_the_width_colour_taking_no_room() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abc", 4), "abc");
        assert_eq!(cut("\x1b[1mabcdef\x1b[0m", 4), "\x1b[1mabc…\x1b[0m");
        assert_eq!(visible_len("\x1b[31mred\x1b[0m"), 3);
        let w = wrap_all("  name        one two three four five six seven\n", 30);
        assert_eq!(
            w,
            "  name        one two three\n              four five six\n              seven\n"
        );
        for l in wrap_all(&"x ".repeat(100), 30).lines() {
            assert!(visible_len(l) <= 30, "{l}");
        }
        // Control: a line that fits is left alone.
        assert_eq!(wrap_all("  a  b\n", 60), "  a  b\n");
    }
}
