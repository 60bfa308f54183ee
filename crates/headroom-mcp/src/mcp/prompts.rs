//! Prompts: questions an agent is often asked, as the chain of tools that answers them.
//! Offered with the read tools; the steps that act are named only when this server offers
//! the act tools.

use serde_json::{Map, Value, json};

use super::rpc::RpcError;
use super::tools::ToolSelection;
use crate::config::ToolGroup;

/// (name, title, description)
const ALL: &[(&str, &str, &str)] = &[
    (
        "out-of-slots",
        "Why is my machine out of process slots?",
        "Find out what holds the user's process slots (zombie-leaking parents, a ceiling \
lower than it should be) and what headroom would do about it.",
    ),
    (
        "memory-hog",
        "What is eating my memory?",
        "Find the process trees that hold the most memory, which of them are idle, and what \
could be parked.",
    ),
];

pub(crate) fn list(sel: &ToolSelection) -> Value {
    let prompts: Vec<Value> = ALL
        .iter()
        .filter(|_| sel.has(ToolGroup::Read))
        .map(|(name, title, description)| {
            json!({"name": name, "title": title, "description": description, "arguments": []})
        })
        .collect();
    json!({ "prompts": prompts })
}

pub(crate) fn get(sel: &ToolSelection, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("`name` (a string) is required"))?;
    let Some((_, title, description)) = ALL
        .iter()
        .filter(|_| sel.has(ToolGroup::Read))
        .find(|p| p.0 == name)
    else {
        return Err(RpcError::invalid_params(format!("unknown prompt `{name}`")));
    };
    let act = sel.has(ToolGroup::Act);
    let text = match name {
        "out-of-slots" => format!(
            "{title} Use headroom's tools in this order and explain what you find in plain \
words. 1. `probe`: how many slots are used of the effective limit, which ceiling binds, the \
level, how many zombies and the time left. 2. `limits`: every ceiling and the traps that \
apply (a limit inherited from an old login session, a pids cgroup). 3. `explain_reap`: which \
parents hold the zombies, and for each the verdict and the rule that decided it (a parent \
whose session is still working is spared). 4. `evidence`: whether this happened before and \
when. {}",
            if act {
                "If explain_reap lists targets and the user agrees, `reap` ends exactly those \
parents (SIGTERM, grace, SIGKILL), and probe afterwards shows the slots freed. Never reap \
without showing the table first."
            } else {
                "This server cannot act: say which `headroom reap` command the user could run."
            }
        ),
        _ => format!(
            "{title} 1. `top`: the process trees by footprint, with growth, CPU and a reason \
code; PARK_IDLE marks an idle tree that could be parked. 2. For a tree the user asks about, \
`top` with its pid. {}",
            if act {
                "With the user's agreement, `park_tree` stops an idle tree so its memory can be \
reclaimed and `wake_tree` continues it; headroom refuses to stop you or itself."
            } else {
                "This server cannot act: say which `headroom park-tree` command would help."
            }
        ),
    };
    Ok(json!({
        "description": description,
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
    }))
}
