#!/usr/bin/env bash
# Regenerate the committed man pages and shell completions from the CLI definitions, and
# .ci/macos-layout.c from the macOS FFI declarations. Tests fail when they are stale.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --bin headroom
rm -rf man && target/debug/headroom generate man man
mkdir -p completions
target/debug/headroom generate completions bash > completions/headroom.bash
target/debug/headroom generate completions zsh > completions/_headroom
target/debug/headroom generate completions fish > completions/headroom.fish
HEADROOM_BLESS=1 cargo test --quiet --lib platform::macos::layout::tests::the_committed_c_file_is_current
