#!/usr/bin/env bash
# Measures how long the composite action (action.yml) takes from its start to
# the first trial, run by act on this host the way tests/ci/action_act.rs runs it
# (-P ubuntu-latest=-self-hosted, --action-offline-mode, a cleared environment,
# ACT_DISABLE_VERSION_CHECK=1), for the three ways setup/install.sh gets
# benchgate (issue 10):
#   release  the release archive, served by `python3 -m http.server` on 127.0.0.1
#            (BENCHGATE_RELEASE_BASE_URL), checked against a setup/release.txt
#            computed from it by scripts/release-manifest.sh; cold tool cache
#            (act sets RUNNER_TOOL_CACHE to $HOME/.cache/act/tool_cache itself,
#            --env does not override it: a fresh HOME each time)
#   cached   the same again with the tool cache the release run left (warm)
#   source   no setup/release.txt: `cargo install --locked --path <action root>`
#            with a cold CARGO_TARGET_DIR in a temporary directory (~7 minutes).
#            Offline (CARGO_NET_OFFLINE): the crates come from this machine's
#            ~/.cargo registry cache, so no download time is counted.
# release and cached run --runs times (default 3) each, alternating; source once.
#
# The action tree: `git archive HEAD` of this repository (so the measured commit
# is HEAD; uncommitted changes are not in it) in a temporary git repository,
# which is also the repository under test (`uses: ./`), with
# fixtures/act/benchgate.toml and java-client.sh at its root,
# fixtures/clients/java/out/ (built) and fixtures/act/bench.yml as its workflow,
# changed to `baseline-store: local:.benchgate-baselines` and `comment: never`:
# with a push event and GITHUB_API_URL on a closed port (127.0.0.1:9) no GitHub
# API (or fake of it) is needed. Nothing leaves 127.0.0.1 (act's own start-up
# probe aside: a UDP connect() that sends nothing, see tests/ci/action_act.rs).
#
# Times (this script's clock, each line of act's output stamped as it arrives):
#   job      act's "Run Set up job" line: the start of the job
#   action   act's "Run Main ./" line: the start of the composite action
#   install  act's "Success - Main Install benchgate" line
#   trial    the first trial's command started (fixtures/act/java-client.sh
#            writes its probe file before it starts the JVM; the file's mtime)
#   first    the first "<scenario> / <client> round 1/N: ..." line, which
#            benchgate prints when that trial ends (JVM start, 200 ms warm-up,
#            300 ms measured)
# Printed: job->install, job->first (the figure of issue 10), action->first,
# job->trial, per run and the median and range per path, with the machine, the
# load average before each run and the commit.
#
# The release archive: dist/benchgate-<version>-<target>.tar.gz if present
# (its age is printed: it may predate HEAD; install time hardly depends on it),
# else scripts/package.sh builds it first (7-8 minutes).
#
# Usage: scripts/bench-action-start.sh [--runs N] [--skip-source] [--skip-fast] [--keep]
# Environment: BENCHGATE_ACT (act binary; default: scripts/install-act.sh's),
#   FAST_TIMEOUT (s, default 300) and SOURCE_TIMEOUT (s, default 1800): the limit
#   of one act run; past it act is interrupted, then killed.
# Needs: act (scripts/install-act.sh), python3, git, java and the built Java
# clients (sh fixtures/clients/java/build.sh), cargo for the source path.
# Exit 0 all runs succeeded, 1 a run failed or timed out, 2 a usage/setup error.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd -P)

say() { echo "bench-action-start: $*" >&2; }
die() {
  say "error: $*"
  exit 2
}

runs=3 skip_source=0 skip_fast=0 keep=0
while (($#)); do
  case "$1" in
  --runs)
    runs=${2:-}
    shift
    ;;
  --skip-source) skip_source=1 ;;
  --skip-fast) skip_fast=1 ;;
  --keep) keep=1 ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
    ;;
  *) die "unknown argument $1 (see --help)" ;;
  esac
  shift
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "--runs needs a positive number"
FAST_TIMEOUT=${FAST_TIMEOUT:-300}
SOURCE_TIMEOUT=${SOURCE_TIMEOUT:-1800}

# 1. What is needed.
for tool in git python3 java timeout sha256sum; do
  command -v "$tool" >/dev/null || die "needs $tool"
done
[[ -f fixtures/clients/java/out/.classpath ]] ||
  die "the Java clients are not built: sh fixtures/clients/java/build.sh (scripts/install-test-deps.sh does)"
if [[ -n "${BENCHGATE_ACT:-}" ]]; then
  act=$BENCHGATE_ACT
else
  act=$(bash scripts/install-act.sh) || die "no act: bash scripts/install-act.sh"
fi
[[ -x "$act" ]] || die "no act at $act"

version=$(sed -n 's/^version[[:space:]]*=[[:space:]]*"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)
case "$(uname -m)" in
x86_64) target=x86_64-unknown-linux-musl ;;
aarch64) target=aarch64-unknown-linux-musl ;;
*) die "no release target for $(uname -m)" ;;
esac
asset="benchgate-$version-$target.tar.gz"
commit=$(git rev-parse HEAD)

# 2. The machine.
cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n 1)
echo "machine: $(nproc) CPUs (nproc), ${cpu:-unknown CPU}, $(uname -sr), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM"
echo "commit:  $commit ($(git log -1 --format=%cs HEAD))$(git diff --quiet HEAD -- || echo ', the work tree has uncommitted changes: not measured')"
echo "act:     $("$act" --version) ($act)"
echo "date:    $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"

# 3. The release archive.
if ((skip_fast == 0)); then
  if [[ ! -f "dist/$asset" ]]; then
    say "no dist/$asset: building it with scripts/package.sh first (7-8 minutes)"
    bash scripts/package.sh "$target" >&2
  fi
  echo "archive: dist/$asset ($(stat -c %s "dist/$asset") bytes, built $(date -u -r "dist/$asset" '+%Y-%m-%d %H:%M UTC'); HEAD committed $(git log -1 --format=%cd --date=format-local:'%Y-%m-%d %H:%M UTC' HEAD))"
fi

# 4. A work directory, removed at the end with everything started here.
work=$(mktemp -d -t benchgate-action-start.XXXXXX)
server_pid="" sampler=""
# shellcheck disable=SC2329 # the EXIT trap calls it
cleanup() {
  [[ -z "$server_pid" ]] || kill "$server_pid" 2>/dev/null || true
  [[ -z "$sampler" ]] || kill "$sampler" 2>/dev/null || true
  if ((keep)); then
    say "kept $work"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The action tree, also the repository under test. $1: its directory, $2: 1 to
# give it a setup/release.txt for the served archive.
lay_out() {
  local repo=$1 release=$2 wf
  mkdir -p "$repo"
  git archive HEAD | tar -x -C "$repo"
  cp fixtures/act/benchgate.toml fixtures/act/java-client.sh "$repo/"
  mkdir -p "$repo/fixtures/clients/java/out" "$repo/.github/workflows"
  cp -R fixtures/clients/java/out/. "$repo/fixtures/clients/java/out/"
  wf="$repo/.github/workflows/bench.yml"
  sed -e 's/^\( *baseline-store:\) branch$/\1 local:.benchgate-baselines/' \
    -e 's/^\( *comment:\) always$/\1 never/' fixtures/act/bench.yml >"$wf"
  if ! grep -q '^ *baseline-store: local:.benchgate-baselines$' "$wf" || ! grep -q '^ *comment: never$' "$wf"; then
    die "fixtures/act/bench.yml no longer has 'baseline-store: branch' and 'comment: always' to replace"
  fi
  rm -f "$repo/setup/release.txt"
  if ((release)); then
    bash scripts/release-manifest.sh "$version" octo/app "$work/www/v$version" "$repo/setup/release.txt" >/dev/null
  fi
  (
    cd "$repo"
    export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
    git init -q -b main
    git add -A
    git add -f fixtures/clients/java/out # ignored by the tree's .gitignore, which act's copy honours
    git -c user.name=bench -c user.email=bench@example.invalid commit -q -m "the action's tree"
    # act names the repository after origin (GITHUB_REPOSITORY); never fetched.
    git remote add origin https://github.com/octo/app.git
  )
}

# 5. The release server: dist/'s archive at /v<version>/<asset> on 127.0.0.1.
release_base=""
if ((skip_fast == 0)); then
  mkdir -p "$work/www/v$version"
  cp "dist/$asset" "$work/www/v$version/"
  python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$work/www" >"$work/http.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do
    port=$(sed -n 's/^Serving HTTP on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' "$work/http.log")
    [[ -z "$port" ]] || break
    sleep 0.1
  done
  [[ -n "$port" ]] || die "python3 -m http.server did not start: $(cat "$work/http.log")"
  release_base="http://127.0.0.1:$port"
  lay_out "$work/tree-release" 1
fi
if ((skip_source == 0)); then
  command -v cargo >/dev/null || die "the source path needs cargo"
  lay_out "$work/tree-source" 0
fi

# 6. One act run. $1: name, $2: tree, $3: act's HOME (RUNNER_TOOL_CACHE is
# $HOME/.cache/act/tool_cache), $4: time limit (s), then --env NAME=VALUE pairs.
# Leaves $work/<name>.log (each line "<epoch seconds> <act's line>").
stamp() {
  local line
  while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done
}
act_run() {
  local name=$1 tree=$2 home=$3 limit=$4
  shift 4
  local dump="$work/$name.dump" envs=() e rc
  mkdir -p "$dump" "$home"
  for e in "$@"; do envs+=(--env "$e"); done
  echo "$EPOCHREALTIME act started (load $(cut -d' ' -f1 /proc/loadavg))" >"$work/$name.log"
  # The 1-min load average every 2 s while act runs (other work on the machine).
  (while sleep 2; do cut -d' ' -f1 /proc/loadavg; done) >"$work/$name.load" &
  sampler=$!
  set +e
  (
    cd "$tree"
    exec env -i PATH="$PATH" HOME="$home" LANG=C.UTF-8 ACT_DISABLE_VERSION_CHECK=1 \
      timeout --signal=INT --kill-after=15 "$limit" \
      "$act" push -W .github/workflows/bench.yml -e "$root/fixtures/events/push_main.json" \
      -P ubuntu-latest=-self-hosted --action-offline-mode --no-cache-server --defaultbranch main \
      --env GITHUB_API_URL=http://127.0.0.1:9 \
      --env "BENCHGATE_ACT_DUMP=$dump" --env "BENCHGATE_ACT_OUTPUTS=$work/$name.outputs" \
      "${envs[@]}" </dev/null 2>&1
  ) | stamp >>"$work/$name.log"
  rc=${PIPESTATUS[0]}
  set -e
  kill "$sampler" 2>/dev/null || true
  wait "$sampler" 2>/dev/null || true
  sampler=""
  if ((rc == 124 || rc == 137)); then
    say "$name: act ran longer than ${limit} s: stopped"
    kill_leftovers
  fi
  return "$rc"
}

# Processes of this script's runs still alive after a timeout: their command
# line or executable names the work directory. Killed by pid.
kill_leftovers() {
  local p
  for p in /proc/[0-9]*; do
    if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "$work" ||
      [[ "$(readlink "$p/exe" 2>/dev/null)" == "$work"/* ]]; then
      say "killing leftover ${p#/proc/}: $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | cut -c1-120)"
      kill -KILL "${p#/proc/}" 2>/dev/null || true
    fi
  done
}

# The stamp of the first log line matching $2 (an ERE) in $1, or nothing.
at() { grep -E -m1 -- "$2" "$1" | cut -d' ' -f1 || true; }
# $2 - $1 in seconds, 2 decimals; "-" if either is missing.
span() {
  if [[ -z "$1" || -z "$2" ]]; then echo "-"; else awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; fi
}

failed=0
declare -A figures # "<path> <measure>" -> space-separated values
# Reads one run's log; $1 name, $2 path, $3 the install line expected (an ERE).
record() {
  local name=$1 path=$2 expect=$3 log="$work/$1.log" t_job t_action t_install t_first t_trial probe
  t_job=$(at "$log" '⭐ Run Set up job')
  t_action=$(at "$log" '⭐ Run Main \./$')
  t_install=$(at "$log" 'Success - Main Install benchgate')
  t_first=$(at "$log" ' round 1/[0-9]+: [0-9.]+ req/s')
  probe=$(find "$work/$name.dump" -name 'client-*.env' -printf '%T@\n' 2>/dev/null | sort -n | head -n 1)
  t_trial=${probe:-}
  if ! grep -qE -- "$expect" "$log"; then
    say "$name: setup/install.sh did not take the $path path (no /$expect/ in $log)"
    failed=1
  fi
  local j_i j_f a_f j_t
  j_i=$(span "$t_job" "$t_install") j_f=$(span "$t_job" "$t_first")
  a_f=$(span "$t_action" "$t_first") j_t=$(span "$t_job" "$t_trial")
  local load
  load="$(sed -n '1s/.*(load \(.*\))$/\1/p' "$log")/$(sort -g "$work/$name.load" 2>/dev/null | tail -n 1)"
  printf '  %-10s load %-10s  job->install %6s s  job->first trial %6s s  action->first trial %6s s  (job->trial started %s s)\n' \
    "$name" "${load%/}" "$j_i" "$j_f" "$a_f" "$j_t"
  if [[ "$j_f" == "-" ]]; then
    say "$name: no successful first trial (a '<scenario> / <client> round 1/N: ... req/s' line) in its log"
    failed=1
    return
  fi
  figures["$path install"]+="$j_i "
  figures["$path first"]+="$j_f "
  figures["$path action"]+="$a_f "
}

# An act run that failed: its log's tail, the script fails at the end.
run_or_report() { # name, then act_run's arguments after the name
  local name=$1
  if ! act_run "$@"; then
    say "$name: act failed; the end of its log:"
    tail -n 30 "$work/$name.log" | cut -d' ' -f2- >&2
    failed=1
  fi
}

# 7. The runs.
echo
echo "runs (times from act's log lines as they arrived; load = the 1-min load average before the run/its highest during the run):"
if ((skip_fast == 0)); then
  for i in $(seq "$runs"); do
    home="$work/home-$i" # a fresh HOME: a cold tool cache
    run_or_report "release-$i" "$work/tree-release" "$home" "$FAST_TIMEOUT" "BENCHGATE_RELEASE_BASE_URL=$release_base"
    record "release-$i" release 'benchgate setup: verified '
    run_or_report "cached-$i" "$work/tree-release" "$home" "$FAST_TIMEOUT" "BENCHGATE_RELEASE_BASE_URL=$release_base"
    record "cached-$i" cached 'benchgate setup: cached: '
  done
fi
if ((skip_source == 0)); then
  say "the source path: cargo install of $commit with a cold CARGO_TARGET_DIR (about 7 minutes)"
  run_or_report source "$work/tree-source" "$work/home-source" "$SOURCE_TIMEOUT" \
    "RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}" "CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}" \
    "CARGO_TARGET_DIR=$work/source-target" CARGO_NET_OFFLINE=true
  record source source 'benchgate setup: cargo install --locked --path '
fi

# 8. Median and range per path.
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.2f", v[(NR + 1) / 2]; else printf "%.2f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
range() { tr ' ' '\n' | grep . | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f-%.2f", lo, hi }'; }
echo
echo "summary (seconds; median, range over the runs):"
printf '  %-8s %-5s %-22s %-22s %-22s\n' path runs job-\>install job-\>first-trial action-\>first-trial
for path in release cached source; do
  [[ -n "${figures["$path first"]:-}" ]] || continue
  n=$(wc -w <<<"${figures["$path first"]}")
  row=()
  for m in install first action; do
    row+=("$(median <<<"${figures["$path $m"]}") ($(range <<<"${figures["$path $m"]}"))")
  done
  printf '  %-8s %-5s %-22s %-22s %-22s\n' "$path" "$n" "${row[@]}"
done
echo "goal (issue 10): release path, job start -> first trial <= 15 s"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$failed"
