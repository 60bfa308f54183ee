#!/usr/bin/env bash
# Regenerate the committed man pages and shell completions from the CLI definitions.
# tests/integration/generated.rs fails when they are stale.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --bin headroom
rm -rf man && target/debug/headroom generate man man
mkdir -p completions
target/debug/headroom generate completions bash > completions/headroom.bash
target/debug/headroom generate completions zsh > completions/_headroom
target/debug/headroom generate completions fish > completions/headroom.fish
