//! The `hangs_check` tool: `hangs --dry-run`, one live round that decides and plans and
//! touches nothing (no signal, exec, notification, state or event). Which apps are hung is
//! `core::hangs::round`'s decision, the same one `hangs --observations FILE` replays from a
//! recorded round; this file only says where the tool is offered and how it is run.
//!
//! Offered only where a round can ask the WindowServer: macOS, in a GUI login session
//! (`gui_session`, asked once when the server starts). The WindowServer is asked from the
//! main thread only (`platform::macos::apps`), so the call runs on the server's reading
//! thread, which is the main thread; a round takes milliseconds and never execs.

use super::{Effect, Spec, Tools, report_of};
use crate::actions::hang_round::report::RoundReport;
use crate::config::ToolGroup;
use crate::mcp::args::{NoArgs, input_schema};

pub(crate) const NAME: &str = "hangs_check";

pub(crate) const SPEC: Spec = Spec {
    name: NAME,
    title: "Is an app hung now?",
    description: "hangs --dry-run: one live round over the running GUI apps, as macOS \
(Force Quit) sees them now: how many were checked and each one not responding, with its \
state (pending on a first unresponsive round, confirmed on the next, cooling-down or blocked \
within an hour of a restart, ignored with the reason, stopped or traced when held) and what \
a real round would do. Plans only: restarts nothing, notifies nothing, writes no state and no \
event. Offered only on macOS in a GUI login session.",
    group: ToolGroup::Read,
    effect: Effect::Reads,
    level_exit: false,
    needs_gui: true,
    input: input_schema::<NoArgs>,
    output: report_of::<RoundReport>,
    call: |t, s, c, a| {
        t.command::<NoArgs, RoundReport>(s, c, a, |_, _, _| {
            vec!["hangs".to_string(), "--dry-run".into()]
        })
    },
};

/// Why a server does not offer the tool (an agent that calls it anyway is told).
pub(crate) fn not_offered() -> String {
    format!(
        "`{NAME}` is not offered here: a hangs round asks the macOS WindowServer, and this \
         server runs on {} {}",
        std::env::consts::OS,
        if cfg!(target_os = "macos") {
            "outside a GUI login session"
        } else {
            "(hangs_events still lists what was recorded)"
        }
    )
}

/// Whether a hangs round can ask the WindowServer from here: macOS, a GUI login session,
/// and the caller on the main thread (where `mcp::serve` builds its tools).
pub(crate) fn gui_session() -> bool {
    crate::platform::native_apps().is_ok_and(|a| a.scan().available)
}

impl Tools {
    /// Whether the server offers `spec`: its group is selected and, for a tool that asks
    /// the WindowServer, there is a GUI session to ask.
    pub(crate) fn offers(&self, spec: &Spec) -> bool {
        self.selection.has(spec.group) && (!spec.needs_gui || self.gui)
    }
}
