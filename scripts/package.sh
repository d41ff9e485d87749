#!/usr/bin/env bash
# Builds the release archive of one target: a stripped, statically linked
# `benchgate` in dist/benchgate-<version>-<target>.tar.gz (one directory,
# benchgate-<version>-<target>/benchgate), plus dist/<archive>.sha256
# (sha256sum format). The version is Cargo.toml's. Then checks the archive: its
# binary runs, `benchgate --version` prints that version, and for musl targets
# it is statically linked. The release workflow (.github/workflows/release.yml)
# runs this on one native runner per target; scripts/test.sh runs it for
# x86_64-unknown-linux-musl. setup/install.sh installs these archives.
#
# Usage: scripts/package.sh [TARGET]   (default x86_64-unknown-linux-musl)
#
# Needs: rustup (the target is added when missing) and, for *-linux-musl, a C
# compiler for musl (ring's C and assembly): musl-gcc from Debian/Ubuntu's
# musl-tools (scripts/install-test-deps.sh installs it). The cc crate would look
# for `<arch>-linux-musl-gcc` and then fall back to the host's glibc `cc`, so
# CC_<target> is set to musl-gcc unless already set. The target can't be
# cross-run here: build each target on its own architecture.
#
# Builds in ${BENCHGATE_DIST_TARGET_DIR:-target/dist}, so the release build never
# holds the lock of (or competes with) target/ that the debug builds and tests use.
# The release profile's debug info is not built (CARGO_PROFILE_RELEASE_DEBUG=0):
# the shipped binary is stripped anyway. STRIP overrides the strip tool.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "package: $*" >&2; }
die() {
  say "error: $*"
  exit 1
}

TARGET="${1:-x86_64-unknown-linux-musl}"
[[ "$TARGET" =~ ^[a-z0-9_]+-[a-z0-9_]+-[a-z0-9_]+(-[a-z0-9_]+)?$ ]] || die "not a target triple: $TARGET"
VERSION=$(sed -n 's/^version[[:space:]]*=[[:space:]]*"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)
[[ -n "$VERSION" ]] || die "no version in Cargo.toml"
NAME="benchgate-$VERSION-$TARGET"
ASSET="$NAME.tar.gz"
DIST=dist
export CARGO_TARGET_DIR="${BENCHGATE_DIST_TARGET_DIR:-target/dist}"
started=$SECONDS

# 1. The Rust target and, for musl, the C compiler.
if ! rustup target list --installed | grep -qx "$TARGET"; then
  say "rustup target add $TARGET"
  rustup target add "$TARGET"
fi
cc_var="CC_${TARGET//-/_}"
if [[ "$TARGET" == *-linux-musl* && -z "${!cc_var:-}" ]]; then
  command -v musl-gcc >/dev/null ||
    die "no musl-gcc: ring's C code needs a C compiler for musl (Debian/Ubuntu: apt-get install musl-tools; or set $cc_var)"
  export "$cc_var=musl-gcc"
fi

# 2. The build.
say "cargo build --release --locked --target $TARGET --bin benchgate (in $CARGO_TARGET_DIR${!cc_var:+, $cc_var=${!cc_var}})"
CARGO_PROFILE_RELEASE_DEBUG=0 cargo build --release --locked --target "$TARGET" --bin benchgate
built="$CARGO_TARGET_DIR/$TARGET/release/benchgate"
[[ -x "$built" ]] || die "cargo built no $built"

# 3. Strip (the target's strip when it is not the host's architecture) and archive.
arch="${TARGET%%-*}"
strip_tool="${STRIP:-}"
if [[ -z "$strip_tool" ]]; then
  if [[ "$arch" == "$(uname -m)" ]]; then
    strip_tool="strip"
  else
    strip_tool="$arch-linux-gnu-strip"
  fi
fi
command -v "$strip_tool" >/dev/null || die "no $strip_tool to strip a $arch binary (binutils; or set STRIP)"

work=$(mktemp -d -t benchgate-package.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/$NAME" "$DIST"
cp "$built" "$work/$NAME/benchgate"
"$strip_tool" "$work/$NAME/benchgate"
chmod 0755 "$work/$NAME/benchgate"
# Fixed owner, order and times, and gzip without a name or time stamp: the
# archive's bytes depend on the binary only.
tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - "$NAME" |
  gzip -n -9 >"$DIST/$ASSET.tmp"
mv -f "$DIST/$ASSET.tmp" "$DIST/$ASSET"
(cd "$DIST" && sha256sum "$ASSET" >"$ASSET.sha256")
archive_sha=$(cut -d' ' -f1 "$DIST/$ASSET.sha256")
binary_sha=$(sha256sum "$work/$NAME/benchgate" | cut -d' ' -f1)

# 4. Check what was archived: it extracts, runs, prints the version, is static.
mkdir "$work/check"
tar -xzf "$DIST/$ASSET" -C "$work/check"
bin="$work/check/$NAME/benchgate"
[[ -x "$bin" ]] || die "$ASSET holds no executable $NAME/benchgate"
got=$("$bin" --version) || die "$NAME/benchgate --version failed (a $arch binary on a $(uname -m) machine?)"
[[ "$got" == "benchgate $VERSION" ]] || die "$NAME/benchgate --version printed '$got', expected 'benchgate $VERSION'"
if [[ "$TARGET" == *-linux-musl* ]]; then
  if command -v file >/dev/null; then
    kind=$(file -b "$bin")
    if [[ "$kind" == *"dynamically linked"* || "$kind" != *static* ]]; then
      die "$NAME/benchgate is not statically linked: file says: $kind"
    fi
  else
    kind=$(ldd "$bin" 2>&1 || true)
    [[ "$kind" == *"not a dynamic executable"* || "$kind" == *"statically linked"* ]] ||
      die "$NAME/benchgate is not statically linked: ldd says: $kind"
  fi
  say "static: $kind"
fi

size=$(stat -c %s "$DIST/$ASSET")
bin_size=$(stat -c %s "$bin")
say "ok in $((SECONDS - started)) s: $got"
echo "archive $DIST/$ASSET ($size bytes) sha256 $archive_sha"
echo "binary  $NAME/benchgate ($bin_size bytes) sha256 $binary_sha"
