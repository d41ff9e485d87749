#!/usr/bin/env bash
# Writes setup/release.txt, the checksums that setup/install.sh trusts, from the
# release archives in DIST_DIR (scripts/package.sh's benchgate-VERSION-TARGET.tar.gz):
#   version VERSION
#   repository OWNER/NAME
#   <target> <sha256 of the .tar.gz> <sha256 of the benchgate binary inside>
# The release workflow (.github/workflows/release.yml) commits it into the tree
# it tags; it is absent on main and branches. Each archive must hold exactly
# benchgate-VERSION-TARGET/benchgate as a regular file.
#
# Usage: scripts/release-manifest.sh VERSION REPOSITORY DIST_DIR [OUT]
#   OUT defaults to setup/release.txt (relative to the repository root).
# Prints the manifest. Exit 0 written, 1 an error (nothing written).
set -euo pipefail

die() {
  echo "release-manifest: error: $*" >&2
  exit 1
}
(($# == 3 || $# == 4)) || die "usage: $0 VERSION REPOSITORY DIST_DIR [OUT]"
version="${1#v}" repo=$2 dist=$3
out="${4:-$(cd "$(dirname "$0")/.." && pwd)/setup/release.txt}"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || die "not a version: $1"
[[ "$repo" =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] || die "not a repository owner/name: $repo"
[[ -d "$dist" ]] || die "no directory $dist"

work=$(mktemp -d -t benchgate-manifest.XXXXXX)
trap 'rm -rf "$work"' EXIT
{
  echo "# benchgate release manifest (scripts/release-manifest.sh, committed by the release"
  echo "# workflow into the tree of tag v$version). setup/install.sh installs an archive only"
  echo "# if its SHA-256 and its binary's match a line below."
  echo "version $version"
  echo "repository $repo"
} >"$work/manifest"
shopt -s nullglob
archives=("$dist/benchgate-$version-"*.tar.gz)
((${#archives[@]})) || die "no $dist/benchgate-$version-*.tar.gz"
for archive in "${archives[@]}"; do
  name=$(basename "$archive" .tar.gz)
  target=${name#"benchgate-$version-"}
  [[ "$target" =~ ^[a-z0-9_]+-[a-z0-9_]+-linux-[a-z0-9_]+$ ]] || die "$archive: not a Linux target: $target"
  members=$(tar -tzf "$archive")
  [[ "$members" == "$name/"$'\n'"$name/benchgate" || "$members" == "$name/benchgate" ]] ||
    die "$archive must hold $name/benchgate only, holds: $(echo "$members" | tr '\n' ' ')"
  mkdir "$work/$target"
  tar -xzf "$archive" -C "$work/$target" "$name/benchgate"
  [[ -f "$work/$target/$name/benchgate" && ! -L "$work/$target/$name/benchgate" ]] ||
    die "$archive: $name/benchgate is not a regular file"
  archive_sha=$(sha256sum "$archive" | cut -d' ' -f1)
  binary_sha=$(sha256sum "$work/$target/$name/benchgate" | cut -d' ' -f1)
  echo "$target $archive_sha $binary_sha" >>"$work/manifest"
done
mkdir -p "$(dirname "$out")"
cp "$work/manifest" "$out.tmp"
mv -f "$out.tmp" "$out"
cat "$out"
