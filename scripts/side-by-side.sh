#!/usr/bin/env bash
# perf record and ringsim-record side by side: every case of the harness
# (real/compare/side_by_side.py), each run --runs times (default 3), its
# tables written into docs/recorder.md ("Side by side with perf record"),
# the sample counts of every run into --details (default
# /tmp/side-by-side-details.md); then the self-sampling measurement
# (--self-sampling RUNS, default 5; 0: none). As root.
#
#   scripts/side-by-side.sh [--runs N] [--self-sampling N] [--only TEXT] [--no-doc]
#
# With --only TEXT, the cases whose option contains TEXT run and only their
# rows of the doc are replaced. Exit status 1 when a case failed (an
# undocumented difference).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3
self=5
only=""
doc="--write-doc docs/recorder.md"
details=/tmp/side-by-side-details.md
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --self-sampling) self="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --no-doc) doc=""; shift ;;
    --details) details="$2"; shift 2 ;;
    *) echo "side-by-side: unknown option $1 (see the script's header)" >&2; exit 64 ;;
  esac
done

# shellcheck disable=SC2086
bazel ${BAZEL_STARTUP_FLAGS:-} build ${BAZEL_FLAGS:-} //real:record //real/testing:shares
# shellcheck disable=SC2086
bin="$(bazel ${BAZEL_STARTUP_FLAGS:-} info ${BAZEL_FLAGS:-} output_path 2>/dev/null)/k8-opt/bin"
status=0
# shellcheck disable=SC2086
python3 real/compare/side_by_side.py --record "$bin/real/record" --shares "$bin/real/testing/shares" \
  --runs "$runs" --only "$only" --details "$details" $doc || status=$?
echo "side-by-side: sample counts per run in $details"
if [ "$self" -gt 0 ]; then
  python3 real/compare/side_by_side.py --record "$bin/real/record" --shares "$bin/real/testing/shares" \
    --self-sampling "$self" || status=$?
fi
exit "$status"
