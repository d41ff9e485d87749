#!/bin/sh
# benchgate in GitLab CI, through GitLab's REST API (docs/gitlab.md shows the jobs):
#
#   sh benchgate-gitlab.sh note [REPORT]      REPORT defaults to benchgate-report.md
#   sh benchgate-gitlab.sh baseline [OUT]     OUT defaults to baseline.json
#
# note: posts REPORT as one note on the merge request and updates that same note
#   on every later pipeline. The note starts with a marker line (default
#   `<!-- benchgate:gitlab -->`); the note found is the first one, oldest first,
#   whose first line is the marker and whose author is the token's own user (a
#   note by anyone else is never touched). Found: its body is replaced (PUT);
#   none: a note is created (POST). A missing REPORT (the benchmark job stopped
#   before writing one) still updates the note, to say so, then exits 1.
# baseline: downloads BENCHGATE_BASELINE_FILE (default benchgate-results.json)
#   from the artifacts of job BENCHGATE_BASELINE_JOB (default benchmark-main) in
#   the latest successful pipeline of the default branch, to OUT. Works on every
#   tier (GitLab's "download a single artifact file by reference name").
#
# Environment:
#   BENCHGATE_GITLAB_TOKEN  a project access token (or, on GitLab.com Free, a
#                           personal access token of a bot account): scope `api`
#                           for note, `read_api` is enough for baseline
#   CI_API_V4_URL, CI_PROJECT_ID, CI_MERGE_REQUEST_IID (note), CI_DEFAULT_BRANCH
#                           (baseline): GitLab sets them in merge-request pipelines
#   BENCHGATE_NOTE_MARKER   optional, one line; give each suite its own when several
#                           post to one merge request
#   CI_PIPELINE_URL         optional, named in the note when there is no report
#
# The token reaches curl as a config on standard input: never in a command line
# (visible in `ps`), never in a URL, never printed. It is not sent on when
# GitLab redirects an artifact download (to object storage or a CDN).
# Network errors, 429 and 5xx answers are retried, 4 attempts in all (waiting
# Retry-After, at most 60 s, else 1, 2, 4 s); a create whose answer was lost is
# not repeated blindly: the note is looked for again first.
# Needs a POSIX sh, curl and jq. Exit 0 done, 1 failed (a message says why), 2 usage.
set -eu

say() { printf 'benchgate-gitlab: %s\n' "$*" >&2; }
die() {
  say "$*"
  exit 1
}
usage() {
  say "usage: sh benchgate-gitlab.sh note [REPORT] | baseline [OUT]"
  exit 2
}

[ $# -ge 1 ] && [ $# -le 2 ] || usage
cmd=$1
case "$cmd" in
note | baseline) ;;
*) usage ;;
esac
command -v curl >/dev/null 2>&1 || die "needs curl (Alpine: apk add curl; Debian: apt-get install curl)"
command -v jq >/dev/null 2>&1 || die "needs jq (Alpine: apk add jq; Debian: apt-get install jq)"

need() { # variable name
  eval "v=\${$1:-}"
  [ -n "$v" ] || die "$1 is not set${2:+ ($2)}"
}
need BENCHGATE_GITLAB_TOKEN "a masked CI/CD variable: docs/gitlab.md"
need CI_API_V4_URL "GitLab sets it in CI jobs"
need CI_PROJECT_ID "GitLab sets it in CI jobs"
token=$BENCHGATE_GITLAB_TOKEN
nl='
'
case "$token" in
*'"'* | *\\* | *"$nl"* | *"$(printf '\r')"*) die "BENCHGATE_GITLAB_TOKEN holds a quote, backslash or line break: not a GitLab token" ;;
esac
api=${CI_API_V4_URL%/}
enc() { printf '%s' "$1" | jq -sRr @uri; }
project="$api/projects/$(enc "$CI_PROJECT_ID")"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/benchgate-gitlab.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
tries=4

# One request. send AUTH METHOD URL OUT [curl arguments...]; AUTH is token or
# none. Sets code (000: no answer) and redirect; headers in $tmp/headers, curl's
# own error in $tmp/err.
send() {
  s_auth=$1 s_method=$2 s_url=$3 s_out=$4
  shift 4
  set -- -q --silent --show-error --connect-timeout 10 --max-time 120 \
    --request "$s_method" --output "$s_out" --dump-header "$tmp/headers" \
    --write-out '%{http_code} %{redirect_url}' "$@" "$s_url"
  : >"$tmp/headers"
  if [ "$s_auth" = token ]; then
    s_res=$(printf 'header = "PRIVATE-TOKEN: %s"\n' "$token" | curl --config - "$@" 2>"$tmp/err") || true
  else
    s_res=$(curl "$@" </dev/null 2>"$tmp/err") || true
  fi
  code=${s_res%% *}
  redirect=${s_res#"$code"}
  redirect=${redirect# }
  case "$code" in [0-9][0-9][0-9]) ;; *) code=000 ;; esac
}
header() { # name (lower case): its last value in $tmp/headers
  tr -d '\r' <"$tmp/headers" | awk -v want="$1" '{
    n = index($0, ":")
    if (n && tolower(substr($0, 1, n - 1)) == want) { v = substr($0, n + 1); gsub(/^[ \t]+|[ \t]+$/, "", v); last = v; seen = 1 }
  } END { if (seen) print last; else print "-" }'
}
retryable() { case "$code" in 000 | 429 | 5[0-9][0-9]) return 0 ;; esac; return 1; }
pause() { # attempt number
  p_wait=$(header retry-after)
  case "$p_wait" in '' | - | *[!0-9]*) p_wait=$((1 << ($1 - 1))) ;; esac
  [ "$p_wait" -le 60 ] || p_wait=60
  if [ "$code" = 000 ]; then p_what="no answer ($(tr '\n' ' ' <"$tmp/err"))"; else p_what="HTTP $code"; fi
  say "$p_what, trying again in ${p_wait}s"
  sleep "$p_wait"
}
# call: send, retrying network errors, 429 and 5xx (for idempotent requests).
call() {
  c_n=1
  while :; do
    send "$@"
    retryable && [ "$c_n" -lt "$tries" ] || return 0
    pause "$c_n"
    c_n=$((c_n + 1))
  done
}
# fail WHAT FILE: the failed request, explained; GitLab's message when it gave one.
fail() {
  case "$code" in
  000) f_why="no answer from $api: $(tr '\n' ' ' <"$tmp/err")" ;;
  401) f_why="401 Unauthorized: BENCHGATE_GITLAB_TOKEN is not a valid token (mistyped, expired or revoked)" ;;
  403) f_why="403 Forbidden: the token's user may not do this (the token needs scope api, read_api for baseline, and at least the Reporter role)" ;;
  404) f_why="404 Not Found: no such project ($CI_PROJECT_ID) or merge request, or the token's user cannot see it" ;;
  *) f_why="HTTP $code" ;;
  esac
  f_msg=$(jq -r '(.message // .error // empty) | if type == "string" then . else tojson end' "$2" 2>/dev/null | head -c 300) || f_msg=""
  case "$f_msg" in *"$token"*) f_msg="" ;; esac
  die "$1: $f_why${f_msg:+ (GitLab: $f_msg)}"
}

# ---- baseline -------------------------------------------------------------
if [ "$cmd" = baseline ]; then
  out=${2:-baseline.json}
  need CI_DEFAULT_BRANCH "GitLab sets it in CI jobs"
  job=${BENCHGATE_BASELINE_JOB:-benchmark-main}
  file=${BENCHGATE_BASELINE_FILE:-benchgate-results.json}
  path=$(enc "$file" | sed 's,%2F,/,g')
  what="downloading $file from job $job of the latest successful pipeline on $CI_DEFAULT_BRANCH"
  call token GET "$project/jobs/artifacts/$(enc "$CI_DEFAULT_BRANCH")/raw/$path?job=$(enc "$job")" "$tmp/artifact"
  case "$code" in
  30[1278])
    # Object storage or a CDN: a signed URL, fetched without the token.
    [ -n "$redirect" ] || fail "$what: a redirect with no location" "$tmp/artifact"
    call none GET "$redirect" "$tmp/artifact" --location --max-redirs 5
    ;;
  esac
  case "$code" in
  200) ;;
  404) die "$what: 404 Not Found. GitLab takes the newest pipeline on $CI_DEFAULT_BRANCH whose status is success: run one there first (the first merge request has no baseline), and check that job $job keeps $file in artifacts:paths and that it has not expired" ;;
  *) fail "$what" "$tmp/artifact" ;;
  esac
  jq -e 'type == "object"' "$tmp/artifact" >/dev/null 2>&1 || die "$what: the answer is not a results file (not a JSON object)"
  mv "$tmp/artifact" "$out"
  say "baseline: $file of job $job on $CI_DEFAULT_BRANCH written to $out"
  exit 0
fi

# ---- note -----------------------------------------------------------------
report=${2:-benchgate-report.md}
need CI_MERGE_REQUEST_IID "set in merge-request pipelines only: give the job rules: - if: \$CI_PIPELINE_SOURCE == \"merge_request_event\""
marker=${BENCHGATE_NOTE_MARKER:-"<!-- benchgate:gitlab -->"}
case "$marker" in *"$nl"*) die "BENCHGATE_NOTE_MARKER must be one line" ;; esac
mr="$project/merge_requests/$(enc "$CI_MERGE_REQUEST_IID")"

body=$tmp/body
if [ -s "$report" ]; then
  { printf '%s\n' "$marker"; cat "$report"; } >"$body"
  missing=""
else
  {
    printf '%s\n' "$marker"
    printf '**benchgate**: this pipeline wrote no report: the benchmark job stopped before it (see its log).\n'
    if [ -n "${CI_PIPELINE_URL:-}" ]; then printf '\nPipeline: %s\n' "$CI_PIPELINE_URL"; fi
  } >"$body"
  missing=1
fi

call token GET "$api/user" "$tmp/user"
[ "$code" = 200 ] || fail "reading the token's user (GET /user)" "$tmp/user"
me=$(jq -r '.id // empty' "$tmp/user")
case "$me" in '' | *[!0-9]*) die "GET /user answered no user id" ;; esac

# find_note: sets note to the id of our marker note, or empty. Pages of 100,
# oldest first, following x-next-page (at most 200 pages).
find_note() {
  note="" page=1 pages=0
  while [ -n "$page" ]; do
    pages=$((pages + 1))
    [ "$pages" -le 200 ] || die "more than 200 pages of notes on !$CI_MERGE_REQUEST_IID: stopped looking"
    call token GET "$mr/notes?sort=asc&order_by=created_at&per_page=100&page=$page" "$tmp/notes"
    [ "$code" = 200 ] || fail "listing the notes of merge request !$CI_MERGE_REQUEST_IID" "$tmp/notes"
    count=$(jq -r 'if type == "array" then length else "x" end' "$tmp/notes" 2>/dev/null) || count=x
    [ "$count" != x ] || die "listing the notes of !$CI_MERGE_REQUEST_IID: the answer is not a list of notes"
    note=$(jq -r --arg m "$marker" --argjson me "$me" 'first(.[]
      | select((.system | not) and .author.id == $me
        and ((.body // "") | split("\n")[0] | rtrimstr("\r")) == $m)
      | .id) // empty' "$tmp/notes")
    [ -z "$note" ] || return 0
    next=$(header x-next-page)
    case "$next" in
    -) # no pagination headers (a proxy dropped them?): a full page may have more
      if [ "$count" -ge 100 ]; then page=$((page + 1)); else page=""; fi ;;
    '' | *[!0-9]*) page="" ;;
    *) if [ "$next" -gt "$page" ]; then page=$next; else page=""; fi ;;
    esac
  done
}

round=1
while :; do
  find_note
  if [ -n "$note" ]; then
    call token PUT "$mr/notes/$note" "$tmp/answer" --data-urlencode "body@$body"
    [ "$code" = 200 ] || fail "updating note $note on !$CI_MERGE_REQUEST_IID" "$tmp/answer"
    say "updated note $note on merge request !$CI_MERGE_REQUEST_IID"
    break
  fi
  send token POST "$mr/notes" "$tmp/answer" --data-urlencode "body@$body"
  if [ "$code" = 201 ]; then
    say "created note $(jq -r '.id' "$tmp/answer") on merge request !$CI_MERGE_REQUEST_IID"
    break
  fi
  # Lost answers may hide a created note: look again before posting again.
  retryable && [ "$round" -lt "$tries" ] || fail "creating a note on !$CI_MERGE_REQUEST_IID" "$tmp/answer"
  pause "$round"
  round=$((round + 1))
done
[ -z "$missing" ] || die "no report at $report (the benchmark job wrote none): the note says so"
exit 0
