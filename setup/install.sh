#!/usr/bin/env bash
# Installs benchgate on a GitHub Actions runner (Linux, x86_64 or aarch64) and
# puts it on PATH. setup/action.yml runs it; so does the top-level action.yml
# (as "$GITHUB_ACTION_PATH/setup/install.sh"), so it finds its files from its
# own path, never from the working directory.
#
# Where the binary comes from:
#   - A release: the action's tagged tree carries setup/release.txt (written by
#     scripts/release-manifest.sh in .github/workflows/release.yml, absent on
#     main and branches). It names the version, the repository and, per target,
#     the SHA-256 of the release archive and of the binary inside. The archive
#     benchgate-<version>-<target>.tar.gz is downloaded from
#     ${BENCHGATE_RELEASE_BASE_URL:-https://github.com/<repository>/releases/download}/v<version>/
#     (the override is for mirrors and tests: the checksums still come from this
#     tree; a checksum served next to an asset proves nothing and is never read).
#     Both checksums must match, else nothing is installed. The binary lands in
#     the tool cache, ${RUNNER_TOOL_CACHE:-~/.cache/benchgate-tools}/benchgate/<version>/<arch>/
#     with the <arch>.complete marker (as actions/tool-cache lays it out), and is
#     reused from there while its SHA-256 still matches.
#   - The action's own source, where this ref has no release asset (no
#     setup/release.txt: a branch, a commit, `uses: ./`; or the download
#     answers 404): `cargo install --locked --path <action root>`, about 7
#     minutes, needs a Rust toolchain on the runner. A checksum mismatch never
#     falls back to the source.
#
# Inputs (environment; composite steps get no INPUT_* variables):
#   BENCHGATE_SETUP_VERSION  the version to install, X.Y.Z or vX.Y.Z; empty: the
#                            action's own (setup/release.txt's). Another version
#                            has no trusted checksum here unless
#   BENCHGATE_SETUP_SHA256   gives its archive's SHA-256 explicitly.
#   BENCHGATE_SETUP_DRY_SOURCE=1  (tests) the source path prints the cargo
#                            command it would run and exits 0 without building.
# Outputs: path=<binary> and version=<X.Y.Z> to $GITHUB_OUTPUT, the binary's
# directory to $GITHUB_PATH (both skipped when unset: then the path is printed).
# Exit 0 installed, 1 refused or failed (an ::error:: line says why).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
root=$(cd "$here/.." && pwd -P) # the action's root: Cargo.toml, src/
manifest="$here/release.txt"
started=$SECONDS

say() { echo "benchgate setup: $*" >&2; }
# Workflow commands: one line each, % \r \n escaped as the runner expects.
annotate() { # error|notice, message
  local msg=${2//'%'/'%25'}
  msg=${msg//$'\r'/'%0D'}
  msg=${msg//$'\n'/'%0A'}
  echo "::$1 title=benchgate setup::$msg"
}
die() {
  annotate error "$*"
  exit 1
}

work=""
# shellcheck disable=SC2329 # the EXIT trap calls it
cleanup() { [[ -z "$work" ]] || rm -rf "$work"; }
trap cleanup EXIT

# 1. Linux only, x86_64 or aarch64.
os="${RUNNER_OS:-$(uname -s)}"
case "$os" in
Linux | linux) ;;
*) die "benchgate's action runs on Linux runners only (got $os); use runs-on: ubuntu-latest, or the container image" ;;
esac
machine=$(uname -m)
case "$machine" in
x86_64 | amd64) target=x86_64-unknown-linux-musl arch=x64 ;;
aarch64 | arm64) target=aarch64-unknown-linux-musl arch=arm64 ;;
*) die "benchgate has Linux binaries for x86_64 and aarch64 only (this runner is $machine)" ;;
esac

# 2. The inputs.
want="${BENCHGATE_SETUP_VERSION:-}"
want="${want#v}"
if [[ -n "$want" && ! "$want" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  die "input version must be X.Y.Z (got '${BENCHGATE_SETUP_VERSION}')"
fi
sha_input="${BENCHGATE_SETUP_SHA256:-}"
sha_input="${sha_input,,}"
if [[ -n "$sha_input" && ! "$sha_input" =~ ^[0-9a-f]{64}$ ]]; then
  die "input sha256 must be 64 hex digits, the SHA-256 of the release archive"
fi

# 3. The manifest of this tree's release, if any.
m_version="" m_repo="" m_archive="" m_binary=""
if [[ -f "$manifest" ]]; then
  while read -r key a b _ || [[ -n "$key" ]]; do
    case "$key" in
    "" | "#"*) ;;
    version) m_version="$a" ;;
    repository) m_repo="$a" ;;
    *-linux-*)
      [[ "$a" =~ ^[0-9a-f]{64}$ && "$b" =~ ^[0-9a-f]{64}$ ]] ||
        die "$manifest: the line for $key needs two SHA-256 sums (archive, binary)"
      if [[ "$key" == "$target" ]]; then m_archive="$a" m_binary="$b"; fi
      ;;
    *) ;; # unknown keys: newer manifests may add some
    esac
  done <"$manifest"
  [[ "$m_version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || die "$manifest: no valid 'version X.Y.Z' line"
  [[ "$m_repo" =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] || die "$manifest: no valid 'repository owner/name' line"
fi
pin_hint() { # version
  echo "pin the action itself to v$1: uses: ${m_repo:-OWNER/benchgate}@v$1"
}

# 4. The source path: build this tree with cargo.
from_source() { # reason
  say "$1"
  [[ -f "$root/Cargo.toml" ]] || die "no release asset for this ref, and no source to build next to the action ($root/Cargo.toml is missing)"
  command -v cargo >/dev/null ||
    die "no release asset for this ref and no cargo to build it; pin a released version (uses: ${m_repo:-OWNER/benchgate}@vX.Y.Z) or add a Rust toolchain step"
  local dest="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/benchgate-from-source"
  local cmd=(cargo install --locked --path "$root" --root "$dest" --bin benchgate)
  annotate notice "no release asset for this ref: building benchgate from source (about 7 minutes)"
  if [[ "${BENCHGATE_SETUP_DRY_SOURCE:-}" == 1 ]]; then
    echo "dry run (BENCHGATE_SETUP_DRY_SOURCE=1), would run: $(printf '%q ' "${cmd[@]}")"
    exit 0
  fi
  say "${cmd[*]}"
  "${cmd[@]}" >&2
  finish "$dest/bin/benchgate" ""
}

# Runs the installed binary and writes the outputs.
finish() { # binary, expected version (empty: any)
  local bin=$1 out ver
  out=$("$bin" --version) || die "$bin --version failed"
  ver="${out##* }"
  if [[ -n "$2" && "$ver" != "$2" ]]; then
    die "$bin --version printed '$out', expected version $2"
  fi
  if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
    printf 'path=%s\nversion=%s\n' "$bin" "$ver" >>"$GITHUB_OUTPUT"
  fi
  if [[ -n "${GITHUB_PATH:-}" ]]; then
    dirname "$bin" >>"$GITHUB_PATH"
  else
    echo "$bin"
  fi
  say "benchgate $ver at $bin ($((SECONDS - started)) s)"
  exit 0
}

# 5. Which version, and which checksums vouch for it.
if [[ -z "$m_version" ]]; then
  if [[ -n "$want" ]]; then
    die "this ref of the action is not a release (no setup/release.txt), so it has no trusted checksum for version $want; $(pin_hint "$want")"
  fi
  from_source "this ref of the action is not a release (no setup/release.txt)"
fi
want="${want:-$m_version}"
if [[ "$want" == "$m_version" ]]; then
  if [[ -n "$sha_input" && -n "$m_archive" && "$sha_input" != "$m_archive" ]]; then
    die "input sha256 $sha_input disagrees with the checksum committed for benchgate $want ($target): $m_archive"
  fi
  if [[ -z "$m_archive" ]]; then
    from_source "release $m_version has no asset for $target (setup/release.txt)"
  fi
  expect_archive="$m_archive" expect_binary="$m_binary"
else
  [[ -n "$sha_input" ]] ||
    die "version $want is not this action's release ($m_version), so there is no trusted checksum for it; $(pin_hint "$want") (or give input sha256: the SHA-256 of benchgate-$want-$target.tar.gz)"
  expect_archive="$sha_input" expect_binary="" # the binary's: as recorded when this archive was installed
fi

cache_root="${RUNNER_TOOL_CACHE:-${HOME:?}/.cache/benchgate-tools}"
dir="$cache_root/benchgate/$want/$arch"
bin="$dir/benchgate"
marker="$dir.complete"
sha256() { sha256sum "$1" | cut -d' ' -f1; }

# 6. The tool cache: reused only if the binary still has the trusted checksum.
if [[ -f "$marker" && -f "$bin" ]]; then
  read -r _ rec_archive _ rec_binary _ <"$marker" || true
  trusted="${expect_binary:-}"
  if [[ -z "$trusted" && "${rec_archive:-}" == "$expect_archive" ]]; then trusted="${rec_binary:-}"; fi
  if [[ -n "$trusted" && "$(sha256 "$bin")" == "$trusted" ]]; then
    say "cached: $bin"
    finish "$bin" "$want"
  fi
  say "the cached $bin does not match the checksum: downloading again"
fi

# 7. Download, verify the archive, extract, verify the binary.
asset="benchgate-$want-$target.tar.gz"
base="${BENCHGATE_RELEASE_BASE_URL:-https://github.com/$m_repo/releases/download}"
url="${base%/}/v$want/$asset"
command -v curl >/dev/null || die "curl is needed to download $url"
work=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/benchgate-setup.XXXXXX")
say "downloading $url"
set +e
code=$(curl -q --fail --location --retry 3 --connect-timeout 30 --silent --show-error \
  --output "$work/$asset" --write-out '%{http_code}' "$url")
rc=$?
set -e
if ((rc != 0)); then
  if [[ "$code" == 404 && "$want" == "$m_version" ]]; then
    from_source "the release asset answered 404: $url"
  fi
  die "could not download $url (HTTP ${code:-none}, curl exit $rc)"
fi
got=$(sha256 "$work/$asset")
if [[ "$got" != "$expect_archive" ]]; then
  die "checksum mismatch for $asset: expected $expect_archive, got $got ($url): the asset does not match the checksum committed in the action's tagged source; do not use it"
fi
mkdir "$work/x"
member="benchgate-$want-$target/benchgate"
tar -xzf "$work/$asset" -C "$work/x" --no-same-owner --no-same-permissions "$member" ||
  die "$asset ($url) has no $member"
[[ -f "$work/x/$member" && ! -L "$work/x/$member" ]] || die "$asset: $member is not a regular file"
got_binary=$(sha256 "$work/x/$member")
if [[ -n "$expect_binary" && "$got_binary" != "$expect_binary" ]]; then
  die "checksum mismatch for $member in $asset: expected $expect_binary, got $got_binary ($url): the asset does not match the checksum committed in the action's tagged source; do not use it"
fi

# 8. Into the tool cache: marker removed first, binary renamed into place, marker
# (recording both checksums) written last.
mkdir -p "$dir"
rm -f "$marker"
cp "$work/x/$member" "$dir/.benchgate.$$"
chmod 0755 "$dir/.benchgate.$$"
mv -f "$dir/.benchgate.$$" "$bin"
echo "archive $got binary $got_binary" >"$marker"
say "verified $asset (sha256 $got) and installed it in $dir"
finish "$bin" "$want"
