#!/usr/bin/env bash
# The soak: a long campaign on every core, its summary archived (not in CI;
# docs/campaign.md, "Soak").
#
#   scripts/soak.sh [--asan] [--runs N] [--seed S] [--jobs J] [--out DIR] [-- CAMPAIGN OPTIONS...]
#
# Builds //sim:campaign (with --asan under AddressSanitizer + UBSan), then
# runs N seeds (default 100,000; 10,000 with --asan) from S (default 1) on J
# threads (default: every core) with no wall-clock budget, and writes into
# DIR (default soak-results/):
#   soak-<config>-<first>-<last>.txt   what was run (date, commit, machine,
#                                      command) and the campaign's summary;
#   soak-<config>-<first>-<last>.json  the summary as JSON;
#   replays-<config>-<first>-<last>/   replay files of failing seeds.
# Exit status: the campaign's (0: every seed passed). BAZEL overrides the
# bazel command (e.g. BAZEL="flock -o /tmp/ringsim-build.lock bazel"); the
# build is the only step that uses it.
set -euo pipefail
cd "$(dirname "$0")/.."

config=""
name="opt"
runs=""
seed=1
jobs=$(nproc)
out="soak-results"
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --asan) config="--config=asan"; name="asan"; shift ;;
    --runs) runs="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "soak: error: unknown option $1 (see the comment at the top of $0)" >&2; exit 64 ;;
  esac
done
if [ -z "$runs" ]; then
  if [ "$name" = "asan" ]; then runs=10000; else runs=100000; fi
fi
case "$runs$seed$jobs" in
  *[!0-9]*) echo "soak: error: --runs, --seed and --jobs take numbers" >&2; exit 64 ;;
esac

bazel=(${BAZEL:-bazel})
"${bazel[@]}" build $config //sim:campaign
campaign="$("${bazel[@]}" info $config bazel-bin 2>/dev/null)/sim/campaign"

mkdir -p "$out"
last=$((seed + runs - 1))
base="$out/soak-$name-$seed-$last"
command=("$campaign" --seed "$seed" --runs "$runs" --jobs "$jobs" --budget-s 0 --no-progress
         --json "$base.json" --replay-dir "$out/replays-$name-$seed-$last" "${extra[@]}")
{
  echo "soak: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
  echo "machine: $(nproc) cores, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "command: bazel run $config //sim:campaign -- ${command[*]:1}"
} >"$base.txt"
status=0
"${command[@]}" >>"$base.txt" 2>"$base.log" || status=$?
cat "$base.txt"
if [ -s "$base.log" ]; then
  echo "soak: the campaign's log (failures, progress): $base.log"
fi
exit "$status"
