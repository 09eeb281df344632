#!/usr/bin/env bash
# The hunt: fresh seeds until a time budget ends, on every core (not in CI;
# docs/campaign.md, "Hunting"). Run it before resolving an issue that
# touches sim/ or core/: fixed seeds only ever try the configurations they
# drew once.
#
#   scripts/hunt.sh [--budget-s S] [--runs N] [--total-runs M] [--jobs J]
#                   [--shrink-s T] [--asan] [--out DIR] [--campaign PATH]
#                   [-- CAMPAIGN OPTIONS...]
#
# Builds //sim:campaign (with --asan under AddressSanitizer + UBSan; or
# takes the binary PATH as it is), then runs ranges of N seeds (default
# 20,000), each from a first seed drawn from the clock (--seed random), on J
# threads (default: every core), until S seconds (default 600) have passed
# or, with --total-runs, M seeds have run (the last range is cut to fit).
# Failures are shrunk (T seconds each, default 30) and their replays kept;
# CAMPAIGN OPTIONS fix run parameters (e.g. -- --output=aio). It writes
# into DIR (default hunt-results/hunt-<UTC date and time>/):
#   summary.txt     the commit (and whether the tree had local changes),
#                   the machine, the command, each range (first..last seed,
#                   runs, failures), the runs, failures per million and the
#                   first failing seeds with their shrunk replays;
#   summary.json    the same, for scripts;
#   range-K.txt, range-K.json, range-K.log
#                   each range's summary, JSON and log (failures, crashes);
#   replays/        the replay files of failing seeds (and shrunk ones).
# Exit status: 0 no seed failed, 1 some seed failed (a property or a
# crash), 64 bad options, 74 DIR cannot be written. BAZEL overrides the
# bazel command (e.g. BAZEL="flock -o /tmp/ringsim-build.lock bazel"); the
# build is the only step that uses it.
set -euo pipefail
cd "$(dirname "$0")/.."

budget_s=600
runs=20000
total_runs=0
jobs=$(nproc)
shrink_s=30
config=""
name="opt"
out=""
campaign=""
extra=()
usage() { echo "hunt: error: $* (see the comment at the top of $0)" >&2; exit 64; }
value() { [ $# -ge 2 ] || usage "$1 needs a value"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --budget-s) value "$@"; budget_s="$2"; shift 2 ;;
    --runs) value "$@"; runs="$2"; shift 2 ;;
    --total-runs) value "$@"; total_runs="$2"; shift 2 ;;
    --jobs) value "$@"; jobs="$2"; shift 2 ;;
    --shrink-s) value "$@"; shrink_s="$2"; shift 2 ;;
    --asan) config="--config=asan"; name="asan"; shift ;;
    --out) value "$@"; out="$2"; shift 2 ;;
    --campaign) value "$@"; campaign="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) usage "unknown option $1" ;;
  esac
done
case "$budget_s" in ''|*[!0-9]*) usage "--budget-s takes a whole number of seconds" ;; esac
case "$runs$jobs$shrink_s$total_runs" in ''|*[!0-9]*) usage "--runs, --total-runs, --jobs and --shrink-s take numbers" ;; esac
[ "$budget_s" -ge 1 ] && [ "$runs" -ge 1 ] && [ "$jobs" -ge 1 ] || usage "--budget-s, --runs and --jobs must be at least 1"
[ -n "$out" ] || out="hunt-results/hunt-$name-$(date -u '+%Y%m%d-%H%M%S')"
mkdir -p "$out/replays" || exit 74

if [ -z "$campaign" ]; then
  bazel=(${BAZEL:-bazel})
  "${bazel[@]}" build $config //sim:campaign
  campaign="$("${bazel[@]}" info $config bazel-bin 2>/dev/null)/sim/campaign"
fi
[ -x "$campaign" ] || usage "no campaign binary at $campaign"

commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
dirty=""
if [ "$commit" != unknown ] && ! git diff --quiet HEAD; then dirty=" (with local changes)"; fi
{
  echo "hunt: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit$dirty"
  echo "machine: $(nproc) cores, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
  stop="$budget_s s"; [ "$total_runs" -eq 0 ] || stop="$stop or $total_runs runs, whichever comes first"
  echo "budget: $stop; ranges of $runs seeds from --seed random on $jobs threads"
  echo "command: bazel run ${config:+$config }//sim:campaign -- --seed random --runs $runs --jobs $jobs --budget-s REMAINING" \
       "--no-progress --shrink-s $shrink_s --max-failures $runs --json $out/range-K.json --replay-dir $out/replays${extra[*]:+ ${extra[*]}}"
} >"$out/head.txt"
cat "$out/head.txt"

# Ranges until the budget is spent; at most one range per second of budget
# (a range always takes some time), so the loop is bounded.
start=$(date +%s)
status=0
done_runs=0
for ((k = 1; k <= budget_s; k++)); do
  remaining=$((budget_s - ($(date +%s) - start)))
  [ "$remaining" -gt 0 ] || break
  this_runs=$runs
  if [ "$total_runs" -gt 0 ]; then
    [ "$done_runs" -lt "$total_runs" ] || break
    [ $((total_runs - done_runs)) -ge "$runs" ] || this_runs=$((total_runs - done_runs))
  fi
  rc=0
  "$campaign" --seed random --runs "$this_runs" --jobs "$jobs" --budget-s "$remaining" --no-progress --shrink-s "$shrink_s" \
    --max-failures "$runs" --json "$out/range-$k.json" --replay-dir "$out/replays" "${extra[@]}" \
    >"$out/range-$k.txt" 2>"$out/range-$k.log" || rc=$?
  case "$rc" in
    0) ;;
    1|2|3) status=1 ;;  # a failure or a crash: recorded, and the hunt goes on
    *) echo "hunt: the campaign exited $rc: $(head -1 "$out/range-$k.log")" >&2; status=$rc; break ;;
  esac
  echo "range $k: $(head -1 "$out/range-$k.txt")"
  ran=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["runs"])' "$out/range-$k.json" 2>/dev/null || echo "$this_runs")
  done_runs=$((done_runs + ran))
done

python3 scripts/hunt_summary.py "$out" "$commit$dirty" "$budget_s" "$(($(date +%s) - start))" >"$out/summary.body" || exit 74
cat "$out/head.txt" "$out/summary.body" >"$out/summary.txt"
rm -f "$out/head.txt" "$out/summary.body"
cat "$out/summary.txt"
exit "$status"
