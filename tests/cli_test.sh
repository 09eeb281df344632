#!/usr/bin/env bash
# The simulator's commands as a user runs them: bad options and bad replay
# files get one clear line and a distinct exit status; a failing campaign
# prints its seed, a reproduction and a replay that the replay command
# reproduces, naming the property.
set -u
campaign="$1"
replay="$2"
compare="$3"
work="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_error STATUS PATTERN -- COMMAND...: exactly one line on stderr,
# matching PATTERN, and exit status STATUS.
expect_error() {
  local status="$1" pattern="$2"; shift 3
  "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  [ "$rc" -eq "$status" ] || fail "$* exited $rc, expected $status"
  [ "$(wc -l <"$work/err")" -eq 1 ] || fail "$*: expected one line on stderr, got: $(cat "$work/err")"
  grep -q -- "$pattern" "$work/err" || fail "$*: stderr does not say '$pattern': $(cat "$work/err")"
}

expect_error 64 "cpus" -- "$campaign" --cpus=9
expect_error 64 "cpus" -- "$campaign" --cpus=0
expect_error 64 "runs" -- "$campaign" --runs=0
expect_error 64 "mode" -- "$campaign" --mode=sideways
expect_error 64 "ring-pages" -- "$campaign" --ring-pages=128
expect_error 64 "power of two" -- "$campaign" --ring-pages=3 --runs=1
expect_error 64 "snapshots need a read-only mode" -- "$campaign" --mode=normal --snapshot-interval-ns=5000 --runs=1
expect_error 64 "nosuch" -- "$campaign" --nosuch
# An output path given empty is refused, not taken for "no output".
expect_error 64 "json: an empty path" -- "$campaign" --runs=1 --json ""
expect_error 64 "json" -- "$campaign" --runs=1 --json=
expect_error 64 "replay-dir: an empty path" -- "$campaign" --runs=1 --replay-dir ""
expect_error 64 "json: an empty path" -- "$campaign" merge "$work/x.json" --json ""
expect_error 64 "json: an empty path" -- "$compare" --runs=1 --json ""
expect_error 64 "trace: an empty path" -- "$replay" "$work/x.json" --trace ""
expect_error 65 "cannot open" -- "$replay" "$work/missing.json"
printf 'not json' >"$work/bad.json"
expect_error 65 "not JSON" -- "$replay" "$work/bad.json"
printf '1e9999' >"$work/overflow.json"  # found by //tests/fuzz:replay_fuzz
expect_error 65 "not JSON (number overflow" -- "$replay" "$work/overflow.json"

# A clean campaign: exit 0, a summary, a JSON summary.
"$campaign" --runs=20 --no-progress --json="$work/summary.json" >"$work/out" 2>"$work/err" || fail "clean campaign failed: $(cat "$work/out" "$work/err")"
grep -q "20 runs from seed 1, 0 failed" "$work/out" || fail "no summary line: $(cat "$work/out")"
grep -q '"runs": 20' "$work/summary.json" || fail "JSON summary lacks runs"
grep -q '"exactly_once"' "$work/summary.json" || fail "JSON summary lacks per-property counts"
# --jobs defaults to the CPUs the process may run on: on one CPU (taskset)
# and on all of them, the same summary but the wall time.
taskset -c 0 "$campaign" --runs=20 --no-progress >"$work/one-cpu.out" 2>"$work/err" ||
  fail "campaign on one CPU failed: $(cat "$work/one-cpu.out" "$work/err")"
diff <(grep -v "wall time" "$work/out") <(grep -v "wall time" "$work/one-cpu.out") >/dev/null ||
  fail "the campaign on one CPU and on all of them differ: $(diff "$work/out" "$work/one-cpu.out")"

# --seed random: the seed drawn from the clock comes first, and --seed with
# it runs the same seeds again (the same summary but the wall time).
expect_error 64 "seed" -- "$campaign" --seed=banana
# Shards: --shard I/N, or the engines' variables (Slurm array, Kubernetes
# Indexed Job); bad ones get one line; `campaign merge` folds the shards'
# JSON into the summary one run prints (docs/scale.md).
expect_error 64 "not I/N" -- "$campaign" --shard=3 --runs=4
expect_error 64 "below the count" -- "$campaign" --shard=4/4 --runs=4
expect_error 64 "SLURM_ARRAY_TASK_ID is out of range" -- env SLURM_ARRAY_TASK_ID=9 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=4 "$campaign" --runs=4
expect_error 64 "RINGSIM_SHARDS" -- env JOB_COMPLETION_INDEX=1 "$campaign" --runs=4
for i in 1 2 3; do
  env -u TEST_TOTAL_SHARDS -u TEST_SHARD_INDEX SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=3 \
    "$campaign" --runs=9 --no-progress --json="$work/slurm-$i.json" >"$work/slurm-$i.out" 2>"$work/err" ||
    fail "Slurm shard $i failed: $(cat "$work/err")"
  grep -q "3 runs (shard $((i - 1)) of 3) from seed 1" "$work/slurm-$i.out" || fail "Slurm shard $i: $(cat "$work/slurm-$i.out")"
done
env -u TEST_TOTAL_SHARDS -u TEST_SHARD_INDEX JOB_COMPLETION_INDEX=0 RINGSIM_SHARDS=2 "$campaign" --runs=9 --no-progress \
  >"$work/k8s.out" 2>"$work/err" || fail "Indexed Job shard failed: $(cat "$work/err")"
grep -q "5 runs (shard 0 of 2) from seed 1" "$work/k8s.out" || fail "Indexed Job shard: $(cat "$work/k8s.out")"
"$campaign" merge "$work/slurm-1.json" "$work/slurm-2.json" "$work/slurm-3.json" >"$work/merged.out" 2>"$work/err" ||
  fail "merge failed: $(cat "$work/err")"
env -u TEST_TOTAL_SHARDS -u TEST_SHARD_INDEX "$campaign" --runs=9 --no-progress >"$work/nine.out" 2>"$work/err" || fail "9 runs failed"
diff <(grep -v "wall time" "$work/nine.out") <(grep -v "wall time" "$work/merged.out") >/dev/null ||
  fail "merged Slurm shards differ from one run: $(diff "$work/nine.out" "$work/merged.out")"
expect_error 65 "shard 1 of 3 is missing" -- "$campaign" merge "$work/slurm-1.json" "$work/slurm-3.json"
expect_error 64 "files" -- "$campaign" merge
"$campaign" --seed random --runs=3 --no-progress >"$work/random.out" 2>"$work/err" ||
  fail "campaign --seed random failed: $(cat "$work/random.out" "$work/err")"
drawn=$(sed -n '1s/^ringsim campaign: --seed random drew seed \([0-9]*\) .*/\1/p' "$work/random.out")
if [ -z "$drawn" ]; then
  fail "--seed random: no seed on the first line: $(head -1 "$work/random.out")"
else
  grep -q "3 runs from seed $drawn, 0 failed" "$work/random.out" || fail "--seed random: $(cat "$work/random.out")"
  "$campaign" --seed="$drawn" --runs=3 --no-progress >"$work/again.out" 2>"$work/err" || fail "--seed=$drawn failed"
  diff <(tail -n +2 "$work/random.out" | grep -v "wall time") <(grep -v "wall time" "$work/again.out") >"$work/diff" ||
    fail "--seed $drawn did not run what --seed random ran: $(cat "$work/diff")"
fi

# A broken consumer: exit 1, a reproduction line, replays that reproduce.
"$campaign" --runs=10 --mutant=drop_lost --no-progress --shrink-s=3 --max-failures=1 \
  --replay-dir="$work/replays" >"$work/out" 2>"$work/err"
rc=$?
[ "$rc" -eq 1 ] || fail "mutant campaign exited $rc, expected 1"
grep -q "^FAIL seed=" "$work/err" || fail "no FAIL line with a seed: $(cat "$work/err")"
grep -q "reproduce: .* --seed=[0-9]* --runs=1 .*--mutant=drop_lost" "$work/err" || fail "no reproduction line"
file=$(ls "$work/replays"/*.shrunk.replay.json 2>/dev/null | head -1)
[ -n "$file" ] || fail "no shrunk replay written"
for f in "$work/replays"/*.json; do
  "$replay" "$f" >"$work/replay.out" 2>&1
  rc=$?
  [ "$rc" -eq 1 ] || fail "replay of $f exited $rc, expected 1"
  grep -q "^VIOLATED " "$work/replay.out" || fail "replay of $f names no property"
  grep -q "trace hash [0-9a-f]* (as recorded)" "$work/replay.out" || fail "replay of $f is not exact: $(cat "$work/replay.out")"
done
# Its printed reproduction line, run as printed, reproduces the same run:
# the same property, and a replay file with the same trace and output
# hashes.
line=$(sed -n 's|^  reproduce: bazel run //sim:campaign -- ||p' "$work/err" | head -1)
seed=$(sed -n 's/^FAIL seed=\([0-9]*\) property=\([a-z_]*\).*/\1/p' "$work/err" | head -1)
property=$(sed -n 's/^FAIL seed=[0-9]* property=\([a-z_]*\).*/\1/p' "$work/err" | head -1)
[ -n "$line" ] || fail "no reproduction line to run"
# shellcheck disable=SC2086
"$campaign" $line --no-progress --shrink-s=0 --replay-dir="$work/again" >/dev/null 2>"$work/err2"
grep -q "^FAIL seed=$seed property=$property" "$work/err2" || fail "the reproduction line ($line) did not reproduce seed $seed: $(cat "$work/err2")"
hashes() { grep -o '"[a-z]*_hash": *"[0-9a-f]*"' "$1" | sort | tr -d ' \n'; }
[ -n "$(hashes "$work/replays/seed-$seed.replay.json")" ] || fail "no hashes in the recorded replay"
[ "$(hashes "$work/replays/seed-$seed.replay.json")" = "$(hashes "$work/again/seed-$seed.replay.json")" ] ||
  fail "the reproduction ran a different run: $(hashes "$work/replays/seed-$seed.replay.json") vs $(hashes "$work/again/seed-$seed.replay.json")"

# compare's failures print a reproduction line too, which the campaign runs
# to the same failure.
"$compare" --runs=8 --mutant=early_release >"$work/cmp.out" 2>"$work/cmp.err"
rc=$?
[ "$rc" -eq 1 ] || fail "compare with a broken consumer exited $rc, expected 1"
cline=$(sed -n 's|^  reproduce: bazel run //sim:campaign -- ||p' "$work/cmp.err" | head -1)
cseed=$(sed -n 's/^FAIL seed=\([0-9]*\) .* property=\([a-z_]*\).*/\1/p' "$work/cmp.err" | head -1)
cproperty=$(sed -n 's/^FAIL seed=[0-9]* .* property=\([a-z_]*\).*/\1/p' "$work/cmp.err" | head -1)
[ -n "$cline" ] || fail "compare printed no reproduction line: $(head -3 "$work/cmp.err")"
# shellcheck disable=SC2086
"$campaign" $cline --no-progress --shrink-s=0 --replay-dir="$work/cmp-again" >/dev/null 2>"$work/cmp.err2"
grep -q "^FAIL seed=$cseed property=$cproperty" "$work/cmp.err2" ||
  fail "compare's reproduction line ($cline) did not reproduce seed $cseed $cproperty: $(head -3 "$work/cmp.err2")"

# compare: bad options are one line and 64; an output it cannot write is
# one line naming it and 74, after the table.
expect_error 64 "runs" -- "$compare" --runs=0
expect_error 64 "cpus" -- "$compare" --cpus=9
expect_error 64 "seed" -- "$compare" --seed=minus-one
expect_error 74 "cannot write .*no-such-dir/table.json" -- "$compare" --runs=1 --json="$work/no-such-dir/table.json"
grep -q "^runs (failed)" "$work/out" || fail "compare printed no table before its write error: $(head -3 "$work/out")"
"$compare" --runs=1 --json="$work/table.json" >/dev/null 2>"$work/err" || fail "compare --json failed: $(cat "$work/err")"
grep -q '"runs"' "$work/table.json" || fail "compare --json wrote no table: $(head -c 200 "$work/table.json")"

# A corrupted replay is refused, naming the file and the problem.
sed 's/"cpus": 1,/"cpus": 2,/' "$file" >"$work/edited.json"
expect_error 65 "checksum mismatch" -- "$replay" "$work/edited.json"
head -c 200 "$file" >"$work/cut.json"
expect_error 65 "truncated" -- "$replay" "$work/cut.json"

if [ "$failures" -eq 0 ]; then echo "cli_test: all checks passed"; fi
exit $((failures > 0))
