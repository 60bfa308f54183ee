//! Text fitted to the chart's width: items joined on a line until the next would pass it.

use super::{ASCII, Glyphs, to_ascii};

/// `push_wrapped` of `items` as the glyphs write text (plain ASCII with `--ascii`, before
/// the widths are measured).
pub(super) fn wrap(g: &Glyphs, s: &mut String, items: &[String], width: usize, sep: &str) {
    if g.arrow == ASCII.arrow {
        let items: Vec<String> = items.iter().map(|i| to_ascii(i)).collect();
        push_wrapped(s, &items, width, sep);
    } else {
        push_wrapped(s, items, width, sep);
    }
}

/// `items` joined by `sep`, a new line before an item that would pass `width`; an item
/// longer than the width alone is wrapped between words (a word longer than the width is
/// cut, as there is nothing else to do with it).
pub(super) fn push_wrapped(s: &mut String, items: &[String], width: usize, sep: &str) {
    let mut line = String::new();
    let flush = |s: &mut String, line: &mut String| {
        if !line.is_empty() {
            s.push_str(line.trim_end());
            s.push('\n');
            line.clear();
        }
    };
    for item in items {
        let len = line.chars().count();
        let item_len = item.chars().count();
        if len > 0 && len + sep.chars().count() + item_len > width {
            flush(s, &mut line);
        }
        if !line.is_empty() {
            line.push_str(sep);
        }
        if line.chars().count() + item_len <= width {
            line.push_str(item);
            continue;
        }
        // Longer than a line: word by word.
        for word in item.split(' ') {
            let word: String = word.chars().take(width).collect();
            let len = line.chars().count();
            if len > 0 && len + 1 + word.chars().count() > width {
                flush(s, &mut line);
            }
            if !line.is_empty() && !line.ends_with(' ') {
                line.push(' ');
            }
            line.push_str(&word);
        }
    }
    flush(s, &mut line);
}
