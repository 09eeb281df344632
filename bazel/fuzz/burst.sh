#!/usr/bin/env bash
# A short libFuzzer run as a test: burst.sh FUZZER SEED_DIR SECONDS MAX_LEN [DICT].
# RINGSIM_FUZZ_SECONDS (--test_env) overrides SECONDS; MAX_LEN 0 leaves
# libFuzzer's default. New inputs and crash artifacts go to the test's
# undeclared outputs (bazel-testlogs/<target>/test.outputs/outputs.zip); a
# crash, a leak, a timeout (5 s for one input) or an out-of-memory fails
# the test. The last lines of the log are libFuzzer's final statistics.
set -euo pipefail
fuzzer="$1" seeds="$2" seconds="${RINGSIM_FUZZ_SECONDS:-$3}" max_len="$4" dict="${5:-}"
out="${TEST_UNDECLARED_OUTPUTS_DIR:-${TEST_TMPDIR:-/tmp}}"
mkdir -p "$out/new_inputs"
flags=(-max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -print_final_stats=1
       -artifact_prefix="$out/")
if [ "$max_len" != "0" ]; then flags+=(-max_len="$max_len"); fi
if [ -n "$dict" ]; then flags+=(-dict="$dict"); fi
# The first directory receives new inputs; the seeds stay read-only.
exec "$fuzzer" "${flags[@]}" "$out/new_inputs" "$seeds"
