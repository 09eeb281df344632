#!/usr/bin/env bash
# No function of the production code (core/, sim/, model/, real/; tests
# aside) is over 80 lines: a reader follows each one top to bottom.
set -u
script="$1"
shift
files=()
for f in "$@"; do files+=("$f"); done
python3 "$script" --max 80 --top 10 "${files[@]}"
