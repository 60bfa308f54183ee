#!/usr/bin/env bash
# Cut release VERSION: bump the version, regenerate the committed artefacts, date the
# CHANGELOG's Unreleased section, commit, tag vVERSION, and print the formula lines to add
# once the tag is pushed. Nothing is pushed.
#   scripts/release.sh 0.1.0
set -euo pipefail
die() { echo "release.sh: $*" >&2; exit 64; }
version=${1:-}
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "usage: scripts/release.sh VERSION (like 0.1.0)"
cd "$(dirname "$0")/.."
tag="v$version"
git diff --quiet && git diff --cached --quiet || die "the tree has uncommitted changes"
if git rev-parse -q --verify "refs/tags/$tag" >/dev/null; then die "tag $tag exists"; fi
grep -q '^## Unreleased$' CHANGELOG.md || die "CHANGELOG.md has no '## Unreleased' section"
today=$(date -u +%Y-%m-%d)

# The packages' own versions (the first `version =` line, in [package]), then the lock file.
perl -0pi -e 's/^version = "[^"]*"/version = "'"$version"'"/m' Cargo.toml
# The core crate is released with it, at the same version.
perl -0pi -e 's/^version = "[^"]*"/version = "'"$version"'"/m' crates/headroom-core/Cargo.toml
cargo update --workspace --offline --quiet 2>/dev/null || cargo update --workspace --quiet
# The date on the man pages' title lines.
perl -pi -e 's/^(pub const MAN_DATE: &str = )"[^"]*";/$1"'"$today"'";/' src/commands/generate.rs
# Man pages and completions (and whatever else generate.sh keeps committed).
scripts/generate.sh
# Unreleased becomes the release; a fresh, empty Unreleased goes above it.
RV="$version" RD="$today" perl -0pi -e \
  's/^## Unreleased\n/## Unreleased\n\n## [$ENV{RV}] - $ENV{RD}\n/m' CHANGELOG.md
grep -q "^## \[$version\] - $today$" CHANGELOG.md || die "CHANGELOG.md was not updated"
cargo build --locked --quiet --examples   # the tests' fixture
cargo test --locked --quiet --test integration generated

git add -A
git commit -q -m "Release $tag"
git tag -a "$tag" -m "headroom $version"
revision=$(git rev-parse HEAD)

cat <<TEXT
Tagged $tag at $revision. After \`git push origin main $tag\`, restore the stable URL in
Formula/headroom.rb (above \`license\`):

  url "https://github.com/headroom-cli/headroom.git",
      tag:      "$tag",
      revision: "$revision"

and change the README's install line back to \`brew install headroom\`.
TEXT
