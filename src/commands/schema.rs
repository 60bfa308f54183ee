//! `headroom schema [NAME]`: the JSON Schema (draft 2020-12) of each output, generated from
//! the types headroom prints with (`crate::schema`). `schemas/` in the repository holds the
//! same files (`headroom generate schemas DIR`), and a test fails when they are stale.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value;

use crate::cli::SchemaArgs;
use crate::commands::Ctx;
use crate::exit::{ExitStatus, UsageError};
use crate::schema::{ALL, Entry, file_name, find};

/// `headroom schema --json` without a name: every schema, in one object.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Catalog {
    pub schemas: Vec<CatalogEntry>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct CatalogEntry {
    /// `headroom.<thing>/<version>`, the value of that output's `schema` key.
    pub name: &'static str,
    pub title: &'static str,
    /// Its file in the repository's `schemas/`.
    pub file: String,
    /// The JSON Schema itself.
    pub json_schema: Value,
}

impl crate::schema::Document for Catalog {
    const SCHEMA: &'static str = "headroom.schemas/1";
    const TYPE: Option<&'static str> = Some("schemas");
}

pub fn run(ctx: &Ctx<'_>, args: &SchemaArgs) -> Result<ExitStatus> {
    if let Some(name) = &args.name {
        let entry = find(name).ok_or_else(|| {
            UsageError(format!(
                "no output has the schema `{name}`; one of: {}",
                ALL.iter().map(Entry::thing).collect::<Vec<_>>().join(", ")
            ))
        })?;
        ctx.printer.raw(&pretty(entry)?)?;
        return Ok(ExitStatus::Ok);
    }
    if ctx.printer.is_json() {
        let catalog = Catalog {
            schemas: ALL
                .iter()
                .map(|e| CatalogEntry {
                    name: e.name,
                    title: e.title,
                    file: file_name(e.name),
                    json_schema: e.schema(),
                })
                .collect(),
        };
        ctx.printer.json_value(&catalog)?;
    } else {
        let width = ALL.iter().map(|e| e.name.len()).max().unwrap_or(0);
        let mut out = String::new();
        for e in ALL {
            let _ = writeln!(out, "{:width$}  {}", e.name, e.title.replace('`', ""));
        }
        out.push_str("\n`headroom schema NAME` prints one (NAME like `probe`).\n");
        ctx.printer.text(&out)?;
    }
    Ok(ExitStatus::Ok)
}

/// One schema as its committed file holds it: pretty JSON and a newline.
fn pretty(e: &Entry) -> Result<String> {
    let text = serde_json::to_string_pretty(&e.schema())
        .with_context(|| format!("cannot serialise the schema `{}`", e.name))?;
    Ok(text + "\n")
}

/// Every schema into `dir`, one file each (`headroom.probe.1.json`).
pub fn write_all(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create `{}`", dir.display()))?;
    for e in ALL {
        let path = dir.join(file_name(e.name));
        std::fs::write(&path, pretty(e)?)
            .with_context(|| format!("cannot write `{}`", path.display()))?;
    }
    Ok(())
}
