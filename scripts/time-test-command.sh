#!/usr/bin/env bash
# Times the test command as CI runs it: a clean clone of HEAD's commit in a
# temporary directory, `CI=true ./.ci/run` there, then the run's wall time, the
# CPU of every process it started (/usr/bin/time: user and system), and the
# machine's idle and steal time over the run (the first line of /proc/stat), so
# a reader can tell a run held up by its own CPU from one that waited or had
# its CPU taken by a neighbour. The test command's figures in git history (the
# commits that changed it) come from it. The log is kept in the directory it prints; the clone
# (with its target directories, several GB) is removed at the end.
#
# Usage: scripts/time-test-command.sh [LOG_DIR]   (default: a new temporary directory)
# Linux only (/proc/stat). Needs /usr/bin/time (Debian: apt-get install time).
set -euo pipefail
cd "$(dirname "$0")/.."

[ -x /usr/bin/time ] || { echo "time-test-command: needs /usr/bin/time (Debian: apt-get install time)" >&2; exit 2; }
commit=$(git rev-parse HEAD)
log_dir="${1:-$(mktemp -d -t benchgate-test-command.XXXXXX)}"
mkdir -p "$log_dir"
clone=$(mktemp -d -t benchgate-clone.XXXXXX)
trap 'rm -rf "$clone"' EXIT
git clone --quiet --no-local "$PWD" "$clone/repo"
git -C "$clone/repo" checkout --quiet "$commit"

# cpu user nice system idle iowait irq softirq steal ...: in USER_HZ ticks.
ticks() { head -n 1 /proc/stat; }
hz=$(getconf CLK_TCK)
echo "time-test-command: $commit on $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
echo "time-test-command: log in $log_dir/test-command.log"
before=$(ticks)
set +e
(cd "$clone/repo" && CI=true /usr/bin/time -o "$log_dir/time.txt" -f "%e %U %S" ./.ci/run) \
  >"$log_dir/test-command.log" 2>&1
code=$?
set -e
after=$(ticks)
# (/usr/bin/time writes "Command exited with non-zero status N" first on a failure.)
read -r wall user sys < <(tail -n 1 "$log_dir/time.txt")
python3 - "$before" "$after" "$hz" "$wall" "$user" "$sys" "$code" <<'EOF'
import sys
before, after = ([int(x) for x in line.split()[1:]] for line in sys.argv[1:3])
hz = int(sys.argv[3])
wall, user, sys_s = (float(x) for x in sys.argv[4:7])
delta = [(a - b) / hz for a, b in zip(after, before)]
names = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"]
d = dict(zip(names, delta))
total = sum(delta[:8])
print(f"time-test-command: exit {sys.argv[7]}, {wall:.0f} s wall; the run's processes: "
      f"{user:.0f} s user + {sys_s:.0f} s system = {user + sys_s:.0f} CPU-s")
print(f"time-test-command: the machine over the run: {total:.0f} CPU-s, of them "
      f"{d['idle'] + d['iowait']:.0f} idle (iowait included) and {d['steal']:.0f} stolen")
EOF
grep -A20 "^== stage times" "$log_dir/test-command.log" || true
exit "$code"
