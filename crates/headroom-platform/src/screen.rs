//! The size of the terminal tables and screenfuls are laid out for.

/// Narrower than this, a layout gives up on columns and only cuts lines.
const MIN_SCREEN_WIDTH: usize = 20;

/// The width tables are laid out for: the terminal's, else `$COLUMNS` (as a shell exports
/// it); none known (a pipe, no variable): no limit, every column kept.
pub fn screen_width() -> Option<usize> {
    terminal_columns()
        .or_else(|| size_from_env("COLUMNS"))
        .map(|w| w.max(MIN_SCREEN_WIDTH))
}

/// The height a screenful has: the terminal's, else `$LINES`; none known, no limit.
pub fn screen_height() -> Option<usize> {
    terminal_rows()
        .or_else(|| size_from_env("LINES"))
        .map(|h| h.max(5))
}

fn size_from_env(name: &str) -> Option<usize> {
    std::env::var(name)
        .ok()?
        .trim()
        .parse()
        .ok()
        .filter(|&n| n > 0)
}

/// `TIOCGWINSZ` on stdout: (rows, columns), each 0 when the terminal does not say; `None`
/// when stdout is not a terminal. Each dimension is taken on its own (a terminal that
/// knows only its width still has one), which `terminal_size` does not do: it reports
/// nothing unless both are set.
#[cfg(unix)]
fn window() -> Option<(u16, u16)> {
    let ws = rustix::termios::tcgetwinsize(std::io::stdout()).ok()?;
    Some((ws.ws_row, ws.ws_col))
}

/// The height of the terminal on stdout in rows, None when stdout is not a terminal.
pub(crate) fn terminal_rows() -> Option<usize> {
    #[cfg(unix)]
    if let Some((rows, _)) = window().filter(|&(r, _)| r > 0) {
        return Some(usize::from(rows));
    }
    None
}

/// The width of the terminal on stdout in columns, None when stdout is not a terminal.
pub fn terminal_columns() -> Option<usize> {
    #[cfg(unix)]
    if let Some((_, cols)) = window().filter(|&(_, c)| c > 0) {
        return Some(usize::from(cols));
    }
    None
}
