#!/usr/bin/env bash
# Regenerate the committed man pages, shell completions, the SwiftBar plugin (swiftbar/) and
# JSON Schemas (schemas/) from the CLI definitions and the output types, and
# .ci/macos-layout.c from the macOS FFI declarations. Tests fail when they are stale.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --bin headroom
bin="${CARGO_TARGET_DIR:-target}/debug/headroom"
rm -rf man && "$bin" generate man man
mkdir -p completions
"$bin" generate completions bash > completions/headroom.bash
"$bin" generate completions zsh > completions/_headroom
"$bin" generate completions fish > completions/headroom.fish
"$bin" generate swiftbar swiftbar
rm -rf schemas && "$bin" generate schemas schemas
HEADROOM_BLESS=1 cargo test --quiet -p headroom-platform --lib macos::layout::tests::the_committed_c_file_is_current
