#!/usr/bin/env bash
# Regenerates docs/example-comment.md, the rendered pull-request comment, and
# README.md's quote of its start (between `<!-- example-comment:begin` and
# `<!-- example-comment:end -->`, with the date, machine and load). Two real runs of a small suite on this machine (scenario
# get-22b, keep-alive GETs of 22 bytes at 16 workers, clients hyper and reqwest,
# 5 rounds of 300 ms warmup + 800 ms measured): a base run, then a head run in
# which reqwest busy-spins INJECT of CPU per request (`inject_cpu`, a real
# slowdown inside the driver), then
#   benchgate compare --baseline base.json --current head.json --markdown OUT
# with the default gate. Every figure is measured, so a rerun gives other
# numbers (and on a noisy machine possibly other verdicts).
#
# Usage: scripts/example-comment.sh
#   env: BENCHGATE=path/to/benchgate (default: $CARGO_TARGET_DIR or target,
#        /release/benchgate; built with cargo if missing)  INJECT=4us
#        OUT=docs/example-comment.md  WORK=target/example-comment (configs and
#        results files, kept)
# Exit: 0 when the comment was written (whatever the gate said), 2 on an error.
# Loopback only: benchgate's own reference server on 127.0.0.1.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=${BENCHGATE:-$TARGET/release/benchgate}
INJECT=${INJECT:-4us}
OUT=${OUT:-docs/example-comment.md}
WORK=${WORK:-$TARGET/example-comment}

log() { printf '[example-comment] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 2; }

if [[ ! -x "$BIN" ]]; then
  log "building $BIN (cargo build --release --locked)"
  cargo build --release --locked --bin benchgate || die "cargo build failed"
fi
mkdir -p "$WORK"

# $1 = file, $2 = extra line for the reqwest client (or "").
suite() {
  cat >"$1" <<EOF
# scripts/example-comment.sh: the suite behind docs/example-comment.md.
[run]
rounds = 5
warmup = "300ms"
duration = "800ms"

[[client]]
name = "hyper"
kind = "hyper"

[[client]]
name = "reqwest"
kind = "reqwest"
$2

[[scenario]]
name = "get-22b"
method = "GET"
path = "/bytes/22"
concurrency = 16
EOF
}
suite "$WORK/base.toml" ""
suite "$WORK/head.toml" "inject_cpu = \"$INJECT\""

LOAD=$(cut -d' ' -f1 /proc/loadavg)
log "base run ($WORK/base.json); load average $LOAD"
"$BIN" run --quiet --config "$WORK/base.toml" --out "$WORK/base.json" >/dev/null \
  || die "the base run failed"
log "head run, reqwest with inject_cpu = \"$INJECT\" ($WORK/head.json)"
"$BIN" run --quiet --config "$WORK/head.toml" --out "$WORK/head.json" >/dev/null \
  || die "the head run failed"

rc=0
"$BIN" compare --baseline "$WORK/base.json" --current "$WORK/head.json" \
  --markdown "$OUT" --json "$WORK/comparison.json" || rc=$?
((rc <= 1)) || die "benchgate compare failed (exit $rc)"
if [[ "$OUT" != docs/example-comment.md ]]; then
  log "wrote $OUT (README.md quotes docs/example-comment.md only: left alone)"
  exit 0
fi
CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
NOTE="Measured on $(date -u +%Y-%m-%d) by \`scripts/example-comment.sh\` on this repository's
$(nproc)-core ${CPU:-unknown CPU} VM (a shared machine; load average $LOAD when it started):
two runs of \`get-22b\` with \`hyper\` and \`reqwest\`, 5 rounds each, the second with
\`inject_cpu = \"$INJECT\"\` on \`reqwest\`, compared by \`benchgate compare --baseline
base.json --current head.json --markdown $OUT\`. The start of the comment; the whole
one, with its collapsed charts, percentiles, resources and reasons, is
[$OUT]($OUT):"
python3 - "$OUT" "$NOTE" <<'PY' || die "could not update README.md"
import sys
out, note = sys.argv[1], sys.argv[2]
BEGIN, END = "<!-- example-comment:begin", "<!-- example-comment:end -->"
excerpt = []
for line in open(out, encoding="utf-8").read().split("\n"):
    if line.startswith("<details>"):
        break
    excerpt.append(line)
quote = "\n".join(("> " + l) if l else ">" for l in "\n".join(excerpt).strip("\n").split("\n"))
readme = open("README.md", encoding="utf-8").read().split("\n")
b = [i for i, l in enumerate(readme) if l.startswith(BEGIN)]
e = [i for i, l in enumerate(readme) if l.strip() == END]
if len(b) != 1 or len(e) != 1 or e[0] < b[0]:
    sys.exit(f"README.md needs one region {BEGIN} ... --> ... {END}")
region = [readme[b[0]], note, "", quote, END]
readme[b[0] : e[0] + 1] = region
with open("README.md.tmp", "w", encoding="utf-8") as f:
    f.write("\n".join(readme))
import os
os.replace("README.md.tmp", "README.md")
PY
# The outcome, not the exit code: an inconclusive run exits 0 too.
log "wrote $OUT and README.md's quote (outcome: $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["outcome"])' "$WORK/comparison.json"), exit $rc)"
