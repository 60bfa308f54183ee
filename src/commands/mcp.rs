//! `headroom mcp`: the toolbox as a Model Context Protocol server on stdio. The protocol is
//! in `crate::mcp`; every tool runs the command of the same name (see `mcp::tools`).

use anyhow::Result;

use crate::cli::McpArgs;
use crate::commands::Ctx;
use crate::exit::ExitStatus;

pub fn run(ctx: &Ctx<'_>, args: &McpArgs) -> Result<ExitStatus> {
    use crate::config::ToolGroup;
    let groups = if args.read_only {
        vec![ToolGroup::Read]
    } else {
        args.tools
            .clone()
            .unwrap_or_else(|| ctx.settings.mcp.tools.value.clone())
    };
    let selection = crate::mcp::Selection {
        groups,
        run_allow: ctx.settings.mcp.run_allow.value.clone(),
    };
    crate::mcp::serve(ctx.global, selection, ctx.printer)
}
