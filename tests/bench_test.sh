#!/usr/bin/env bash
# //sim:bench as a user runs it, once (--reps 1; a smoke test, not a
# measurement: no figure is compared with anything): it runs every
# workload without a violation (it exits 3 on one), prints a row per
# workload in both tables (speed and the per-record budget of issue 20), and
# refuses a bad --reps with one line.
set -u
bench="$1"
work="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$bench" --reps 1 >"$work/out" 2>"$work/err"
rc=$?
cat "$work/out"
[ "$rc" -eq 0 ] || fail "bench --reps 1 exited $rc: $(cat "$work/err")"
for w in "normal, small records" "normal, mixed sizes" "overwrite, small records" "normal, AIO writer x2" \
         "normal + AUX areas" "normal, small, batch 1"; do
  [ "$(grep -c -- "^$w  " "$work/out")" -eq 2 ] || fail "'$w': not one row in each of the two tables"
done
grep -q "^memcpy bandwidth" "$work/out" || fail "no memcpy baseline"
grep -q "one draw (DecisionSource::draw, random mode) takes [0-9.]* ns" "$work/out" || fail "no draw cost"

"$bench" --reps 0 >"$work/out" 2>"$work/err"
rc=$?
[ "$rc" -eq 64 ] || fail "bench --reps 0 exited $rc, expected 64"
[ "$(wc -l <"$work/err")" -eq 1 ] || fail "bench --reps 0: expected one line on stderr, got: $(cat "$work/err")"

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
