#!/usr/bin/env bash
# Builds the action-only tree that GitHub Marketplace can list: Marketplace wants
# one action.yml at the root of a repository and no workflow files, and this
# repository has three action.yml and its workflows. The tree holds:
#   action.yml         this repository's action.yml, as it is (its listing fields:
#                      name, author, description, branding)
#   setup/install.sh   the installer it runs ("$GITHUB_ACTION_PATH/setup/install.sh")
#   setup/release.txt  the release's checksums, when this checkout has them (the
#                      release workflow writes them at each tag; without them the
#                      tree installs nothing: no source to build next to it)
#   README.md          what the action is, where its source and docs are
#   LICENSE-MIT, LICENSE-APACHE
# and nothing else (no .github/, no other action.yml). The release workflow builds
# it at each tag and uploads it as an artifact; the maintainers push it to the
# action's own repository and tag it there (docs/development.md, "Releasing").
# tests/ci/listing.rs checks its rules and installs from it.
#
# Usage: scripts/action-tree.sh OUT   (OUT must not exist, or be an empty directory)
# Exit 0 built, 1 an error.
set -euo pipefail

die() {
  echo "action-tree: error: $*" >&2
  exit 1
}
(($# == 1)) || die "usage: $0 OUT"
out=$1
root=$(cd "$(dirname "$0")/.." && pwd -P)
if [[ -e "$out" ]]; then
  [[ -d "$out" && -z "$(ls -A "$out")" ]] || die "$out exists and is not an empty directory"
fi

version=$(sed -n 's/^version[[:space:]]*=[[:space:]]*"\([^"]*\)".*/\1/p' "$root/Cargo.toml" | head -n 1)
[[ -n "$version" ]] || die "no version in $root/Cargo.toml"
manifest="$root/setup/release.txt"
repo=OWNER/benchgate
if [[ -f "$manifest" ]]; then
  repo=$(awk '$1 == "repository" {print $2}' "$manifest")
  [[ "$repo" =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] || die "$manifest: no 'repository owner/name' line"
else
  echo "action-tree: no setup/release.txt (not a release): the tree installs nothing until a release writes one" >&2
fi
name=$(sed -n 's/^name:[[:space:]]*//p' "$root/action.yml")
description=$(sed -n 's/^description:[[:space:]]*//p' "$root/action.yml")

mkdir -p "$out/setup"
cp "$root/action.yml" "$root/LICENSE-MIT" "$root/LICENSE-APACHE" "$out/"
install -m 0755 "$root/setup/install.sh" "$out/setup/install.sh"
if [[ -f "$manifest" ]]; then cp "$manifest" "$out/setup/release.txt"; fi
src="https://github.com/$repo"
cat >"$out/README.md" <<EOF
# $name

$description

This repository holds only the GitHub Action, for GitHub Marketplace. It is built
from [$repo]($src) at tag v$version by \`scripts/action-tree.sh\`; the source,
the issues and the documentation live there. Not to be confused with the Go
benchmark gate also called \`benchgate\` (\`go test -bench\` of a Go module): this
one benchmarks HTTP clients, in any language, against a local reference server.

## Usage

\`\`\`yaml
- uses: actions/checkout@<commit> # pinned by commit, as every action here
  with:
    persist-credentials: false
- uses: <this repository>@<the commit of tag v$version> # v$version
  with:
    config: benchgate.toml
\`\`\`

The action installs the static benchgate binary of its own release (Linux,
x86_64 or aarch64), checked against the SHA-256 in \`setup/release.txt\` of this
tree, then measures, compares with the stored baseline, comments on the pull
request and fails the check on a regression. \`benchgate init --workflow\` writes a
suite and the workflows for your project.

- Inputs, outputs and modes: [docs/action.md]($src/blob/v$version/docs/action.md)
- The workflows for each use: [docs/workflows.md]($src/blob/v$version/docs/workflows.md)
- The CLI: [README.md]($src/blob/v$version/README.md)

## License

MIT OR Apache-2.0, at your option: [LICENSE-MIT](LICENSE-MIT), [LICENSE-APACHE](LICENSE-APACHE).
EOF
echo "action-tree: $out ($name, v$version, from $repo)" >&2
