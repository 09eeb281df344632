#!/usr/bin/env bash
# scripts/hunt.sh on a built campaign: fresh ranges until the budget ends,
# a summary with the commit, the ranges, failures per million and the first
# failing seeds, their shrunk replays kept; exit 1 when a seed failed, 64 on
# a bad option.
set -u
hunt="$1"
campaign="$2"
work="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$hunt" --nosuch >/dev/null 2>"$work/err"
[ $? -eq 64 ] || fail "an unknown option did not exit 64"
grep -q "hunt: error: unknown option --nosuch" "$work/err" || fail "no error line: $(cat "$work/err")"

# hunt NAME STATUS ARGS...: runs the hunt into $work/NAME, expecting STATUS.
hunt() {
  local name="$1" status="$2"; shift 2
  "$hunt" --campaign "$campaign" --jobs 1 --out "$work/$name" "$@" >"$work/out" 2>&1
  local rc=$?
  [ "$rc" -eq "$status" ] || fail "hunt $*: exited $rc, expected $status: $(cat "$work/out")"
}

# expect NAME PATTERN WHAT: the summary of hunt NAME has a line PATTERN.
expect() {
  grep -q -- "$2" "$work/$1/summary.txt" || fail "$1: $3: $(cat "$work/$1/summary.txt")"
}

# A clean hunt: ranges drawn from the clock until the budget ends.
hunt clean 0 --budget-s 2 --runs 5
expect clean "^hunt: .*, commit " "no commit line"
expect clean "^  [0-9]*\.\.[0-9]*: [0-9]* runs, 0 failed" "no range line"
expect clean "^failures: 0 (0.0 per million runs)" "no failure line"
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['runs'] > 0 and j['failures'] == 0" \
  "$work/clean/summary.json" || fail "summary.json: $(cat "$work/clean/summary.json")"

# A run target: the hunt stops at exactly --total-runs seeds, the last range
# cut to fit (7 = 3 + 3 + 1), long before its budget.
hunt total 0 --budget-s 600 --runs 3 --total-runs 7
expect total "^runs: 7 in 3 ranges" "did not stop at 7 runs in ranges of 3, 3 and 1"
expect total "^  [0-9]*\.\.[0-9]*: 1 runs, 0 failed" "the last range was not cut to the 1 run left"

# A broken consumer: the failing seeds come first, each with a shrunk replay.
hunt broken 1 --budget-s 3 --runs 10 --shrink-s 1 -- --mutant=drop_lost
expect broken "^failures: [1-9][0-9]* ([0-9.]* per million runs)" "no failures counted"
expect broken "^  seed=[0-9]* property=" "no failing seed listed"
expect broken "replay: bazel run //sim:replay -- .*\.shrunk\.replay\.json" "no shrunk replay"
ls "$work/broken/replays/"*.shrunk.replay.json >/dev/null 2>&1 || fail "no shrunk replay file kept"

if [ "$failures" -eq 0 ]; then echo "hunt_test: all checks passed"; fi
exit $((failures > 0))
