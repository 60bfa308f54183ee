//! Progress on stderr for work a person waits on (`doctor`'s checks, `reap`'s grace): only
//! when stderr is a terminal, and never with `--json` or `--quiet`, so a pipe, a log or a
//! program reading the output gets nothing extra.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::Printer;

/// Whether progress is drawn at all for this printer.
fn shown(p: &Printer) -> bool {
    p.stderr_is_terminal() && !p.is_json() && !p.is_quiet()
}

/// A spinner that says what is being done (`set_message` as the work moves on); a hidden
/// bar, which writes nothing, where progress is not shown. `finish_and_clear` before the
/// report.
pub fn spinner(p: &Printer, what: &str) -> ProgressBar {
    if !shown(p) {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
        bar.set_style(style);
    }
    bar.set_message(what.to_string());
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

/// A countdown to the end of `total` on stderr that says what happens then, as
/// "SIGKILL to what is left in 3.2 s"; drawn while the caller sleeps through `sleep`.
#[derive(Debug)]
pub struct Countdown {
    bar: ProgressBar,
    start: Instant,
    total: Duration,
    what: String,
}

impl Countdown {
    /// Hidden (nothing written, `sleep` still sleeps) where progress is not shown.
    pub fn new(p: &Printer, total: Duration, what: &str) -> Self {
        let bar = if shown(p) {
            let bar = ProgressBar::with_draw_target(
                Some(total.as_millis() as u64),
                ProgressDrawTarget::stderr(),
            );
            if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} [{bar:30}]") {
                bar.set_style(style);
            }
            bar
        } else {
            ProgressBar::hidden()
        };
        let c = Self {
            bar,
            start: Instant::now(),
            total,
            what: what.to_string(),
        };
        c.draw();
        c
    }

    fn draw(&self) {
        let gone = self.start.elapsed();
        let left = self.total.saturating_sub(gone);
        self.bar
            .set_message(format!("{} in {:.1} s", self.what, left.as_secs_f64()));
        self.bar
            .set_position(gone.min(self.total).as_millis() as u64);
    }

    /// Sleep `d`, redrawing every tenth of a second.
    pub fn sleep(&self, d: Duration) {
        let end = Instant::now() + d;
        loop {
            self.draw();
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            std::thread::sleep(left.min(Duration::from_millis(100)));
        }
    }

    /// Remove the countdown from the terminal before the report is written.
    pub fn clear(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// reap's grace is slept through the countdown: it must wait the whole grace, hidden or
    /// drawn (one that returned early would send SIGKILL before the grace is over). What is
    /// drawn, and where not, is tests/integration/progress.rs's (on a pty).
    #[test]
    fn a_countdown_sleeps_the_whole_grace() {
        let (p, _) = Printer::capturing(None);
        let grace = Duration::from_millis(250);
        let c = Countdown::new(&p, grace, "SIGKILL to what is left");
        let start = Instant::now();
        c.sleep(grace);
        assert!(start.elapsed() >= grace, "{:?}", start.elapsed());
        c.clear();
    }
}
