#!/bin/sh
# The side-by-side harness's fast subset (real/compare/side_by_side.py
# --fast): a few cases of perf record and ringsim-record on the same
# command line, each difference documented or a failure; and
# docs/recorder.md's side-by-side tables checked against the harness (its
# cases and documented differences, and the rows this run produced).
#
#   side_by_side_test.sh SIDE_BY_SIDE_PY RECORD SHARES
#
# docs/recorder.md is read from the source tree (the script's runfile is a
# link into it: the test is local).
set -eu
script=$(readlink -f "$1")
doc=$(dirname "$script")/../../docs/recorder.md
if [ ! -r "$doc" ]; then
  echo "side_by_side_test: $doc not found next to $script" >&2
  exit 1
fi
# A doc cell listing renderings (" / ") takes each of them and nothing else.
python3 - "$script" <<'EOF'
import os
import sys
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import side_by_side as s
doc = "| `x` | k | records `a` / records `b` | records `c` | v |"
for cell, want in (("records `a`", True), ("records `b`", True), ("records `ab`", False),
                   ("records `a` / records `b`", True), ("records `c`", False)):
    got = s.row_matches(doc, doc.replace("records `a` / records `b`", cell))
    if got != want:
        sys.exit(f"side_by_side_test: row_matches with {cell!r} is {got}, not {want}")
if s.row_matches(doc, doc + " extra |"):
    sys.exit("side_by_side_test: row_matches takes a row with another number of cells")
EOF
exec python3 "$script" --record "$2" --shares "$3" --fast --check-doc "$doc"
