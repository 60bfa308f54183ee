#!/usr/bin/env bash
# The local half of a release, and the archives the release workflow publishes.
#
#   scripts/release.sh VERSION              cut release VERSION: bump the version, regenerate
#                                           the committed artefacts, date the CHANGELOG's
#                                           Unreleased section, commit, tag vVERSION. Nothing
#                                           is pushed; pushing the tag runs .github/workflows/
#                                           release.yml.
#   scripts/release.sh archive TARGET [DIR] build TARGET (a Rust target triple) in release
#                                           mode and pack headroom-VERSION-TARGET.tar.gz in
#                                           DIR (default dist/): the binary, the man pages,
#                                           the completions, the SwiftBar plugin, README,
#                                           LICENSE, CHANGELOG; and
#                                           its .sha256 (`shasum -a 256` format).
#   scripts/release.sh formula SUMS_FILE    write the formula's stable url/sha256 lines for
#                                           the current version from the archives' sums.
#   scripts/release.sh --dry-run [TARGET]   archive TARGET (default: this machine's) into a
#                                           temporary directory, check what is in it (the
#                                           binary runs and says its version; every man page
#                                           and completion is there), write the formula from
#                                           its sum into a copy, and print what a release
#                                           would publish. Changes nothing in the tree.
set -euo pipefail
die() { echo "release.sh: $*" >&2; exit 64; }
cd "$(dirname "$0")/.."
repo_url=https://github.com/headroom-cli/headroom

version() { sed -n 's/^version = "\([^"]*\)"/\1/p' Cargo.toml | head -1; }
host() { rustc -vV | sed -n 's/^host: //p'; }

# archive TARGET DIR: build and pack one target.
archive() {
  local target=$1 out=$2 v name stage
  v=$(version)
  name=headroom-$v-$target
  # Each step checked by hand: `set -e` does not reach into a function a caller runs in
  # `$(...)`, and a Mac's bash 3.2 has no `inherit_errexit`.
  cargo build --release --locked --target "$target" --bin headroom || die "cargo build --target $target failed"
  [[ -x target/$target/release/headroom ]] || die "no target/$target/release/headroom"
  stage=$(mktemp -d)
  mkdir -p "$stage/$name/man" "$stage/$name/completions" "$stage/$name/swiftbar" "$out"
  cp "target/$target/release/headroom" "$stage/$name/"
  cp man/*.1 "$stage/$name/man/"
  cp completions/* "$stage/$name/completions/"
  cp -p swiftbar/* "$stage/$name/swiftbar/"
  cp README.md LICENSE CHANGELOG.md "$stage/$name/"
  # Owner and mode fixed, so the archive does not carry the builder's uid.
  tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$out/$name.tar.gz" "$name" 2>/dev/null ||
    tar -C "$stage" -czf "$out/$name.tar.gz" "$name"   # bsdtar (macOS) has no --owner
  rm -rf "$stage"
  (cd "$out" && sha256 "$name.tar.gz" >"$name.tar.gz.sha256")
  echo "$out/$name.tar.gz"
}

sha256() { if command -v sha256sum >/dev/null; then sha256sum "$@"; else shasum -a 256 "$@"; fi; }

# formula SUMS FORMULA: replace the block between the `# stable:` markers with url/sha256
# per platform, from SUMS (lines `SHA256  headroom-VERSION-TARGET.tar.gz`).
formula() {
  local sums=$1 file=$2 v
  v=$(version)
  # (No associative arrays: a Mac's /bin/bash is 3.2.)
  s() { awk -v f="headroom-$v-$1.tar.gz" '{ n = $2; sub(/^\*/, "", n) } n == f { print $1 }' "$sums"; }
  u() { echo "$repo_url/releases/download/v$v/headroom-$v-$1.tar.gz"; }
  local t block=""
  for t in aarch64-apple-darwin x86_64-apple-darwin aarch64-unknown-linux-gnu x86_64-unknown-linux-gnu; do
    [[ $(s "$t") =~ ^[0-9a-f]{64}$ ]] || die "no sum for headroom-$v-$t.tar.gz in $sums"
  done
  block="  # stable: written by scripts/release.sh formula (prebuilt archives of tag v$v)
  version \"$v\"
  on_macos do
    on_arm do
      url \"$(u aarch64-apple-darwin)\"
      sha256 \"$(s aarch64-apple-darwin)\"
    end
    on_intel do
      url \"$(u x86_64-apple-darwin)\"
      sha256 \"$(s x86_64-apple-darwin)\"
    end
  end
  on_linux do
    on_arm do
      url \"$(u aarch64-unknown-linux-gnu)\"
      sha256 \"$(s aarch64-unknown-linux-gnu)\"
    end
    on_intel do
      url \"$(u x86_64-unknown-linux-gnu)\"
      sha256 \"$(s x86_64-unknown-linux-gnu)\"
    end
  end
  # end stable"
  grep -q '^  # stable:' "$file" && grep -q '^  # end stable$' "$file" || die "$file has no '# stable:' ... '# end stable' block"
  BLOCK=$block perl -0pi -e 's/^  # stable:.*?^  # end stable\n/$ENV{BLOCK}\n/ms' "$file"
}

case ${1:-} in
  archive)
    [[ -n ${2:-} ]] || die "usage: scripts/release.sh archive TARGET [DIR]"
    archive "$2" "${3:-dist}"
    ;;
  formula)
    [[ -f ${2:-} ]] || die "usage: scripts/release.sh formula SUMS_FILE"
    formula "$2" Formula/headroom.rb
    ;;
  --dry-run)
    target=${2:-$(host)}
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    archive "$target" "$tmp" >/dev/null
    tarball=$tmp/headroom-$(version)-$target.tar.gz
    [[ -f $tarball ]] || die "no $tarball"
    (cd "$tmp" && sha256 -c "$(basename "$tarball").sha256" >/dev/null) || die "the sum does not match"
    tar -C "$tmp" -xzf "$tarball"
    dir=$tmp/$(basename "$tarball" .tar.gz)
    for f in man/*.1 completions/*; do [[ -f $dir/$f ]] || die "the archive lacks $f"; done
    for f in swiftbar/*; do [[ -x $dir/$f ]] || die "the archive lacks $f, or it is not executable"; done
    if [[ $target == "$(host)" ]]; then
      got=$("$dir/headroom" --version)
      [[ $got == "headroom $(version)" ]] || die "the archived binary says '$got'"
    fi
    # The formula, from sums for every target (this one's real, the others' stand-ins).
    v=$(version)
    for t in aarch64-apple-darwin x86_64-apple-darwin aarch64-unknown-linux-gnu x86_64-unknown-linux-gnu; do
      if [[ $t == "$target" ]]; then cat "$tarball.sha256"; else
        printf '%064d  headroom-%s-%s.tar.gz\n' 0 "$v" "$t"; fi
    done >"$tmp/SHA256SUMS"
    cp Formula/headroom.rb "$tmp/headroom.rb"
    formula "$tmp/SHA256SUMS" "$tmp/headroom.rb"
    if command -v ruby >/dev/null; then ruby -c "$tmp/headroom.rb" >/dev/null || die "the written formula does not parse"; fi
    grep -q "sha256 \"$(cut -d' ' -f1 "$tarball.sha256")\"" "$tmp/headroom.rb" || die "the formula lacks this archive's sum"
    echo "dry run: $(basename "$tarball") ($(wc -c <"$tarball" | tr -d ' ') bytes), $(cut -d' ' -f1 "$tarball.sha256")"
    echo "dry run: the formula would read:"
    sed -n '/^  # stable:/,/^  # end stable$/p' "$tmp/headroom.rb"
    ;;
  [0-9]*)
    version=$1
    [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "usage: scripts/release.sh VERSION (like 0.1.0)"
    tag="v$version"
    git diff --quiet && git diff --cached --quiet || die "the tree has uncommitted changes"
    if git rev-parse -q --verify "refs/tags/$tag" >/dev/null; then die "tag $tag exists"; fi
    grep -q '^## Unreleased$' CHANGELOG.md || die "CHANGELOG.md has no '## Unreleased' section"
    today=$(date -u +%Y-%m-%d)
    # The packages' own versions (the first `version =` line, in [package]), then the lock file.
    perl -0pi -e 's/^version = "[^"]*"/version = "'"$version"'"/m' Cargo.toml
    # Every crate of crates/ is released with it, at the same version (the command line's
    # `--version` is headroom-cli's).
    for m in crates/*/Cargo.toml; do
      perl -0pi -e 's/^version = "[^"]*"/version = "'"$version"'"/m' "$m"
    done
    # ... and the crates above ask for those versions (a published dependency needs one).
    perl -pi -e 's/^(headroom-[a-z]+ = \{ path = "[^"]*", version = )"[^"]*"/$1"'"$version"'"/' Cargo.toml crates/*/Cargo.toml
    cargo update --workspace --offline --quiet 2>/dev/null || cargo update --workspace --quiet
    # The date on the man pages' title lines.
    perl -pi -e 's/^(pub(?:\(crate\))? const MAN_DATE: &str = )"[^"]*";/$1"'"$today"'";/' crates/headroom-commands/src/commands/generate.rs
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
    echo "Tagged $tag at $(git rev-parse HEAD). \`git push origin main $tag\` runs the release"
    echo "workflow: the four archives and SHA256SUMS on the release, then the formula's stable"
    echo "url/sha256 lines committed to main (scripts/release.sh formula)."
    ;;
  *) die "usage: scripts/release.sh VERSION | archive TARGET [DIR] | formula SUMS_FILE | --dry-run [TARGET]" ;;
esac
