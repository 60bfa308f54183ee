//! `headroom mcp`: the toolbox as a Model Context Protocol server on stdio. The protocol is
//! in `crate::mcp`; every tool runs the command of the same name (see `mcp::tools`).

use anyhow::Result;

use crate::cli::McpArgs;
use crate::commands::Ctx;
use crate::exit::ExitStatus;

pub fn run(ctx: &Ctx<'_>, args: &McpArgs) -> Result<ExitStatus> {
    crate::mcp::serve(ctx.global, args.read_only, ctx.printer)
}
