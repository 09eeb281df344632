#!/usr/bin/env bash
# Counts test cases in the JUnit XML files Bazel leaves under a testlogs
# directory: prints "<passed> <failed>". A test case fails if it holds a
# <failure> or <error>. GoogleTest and RapidCheck write one test case per
# test; Bazel writes one per shell test.
set -euo pipefail
dir="$1"
find -L "$dir" -name test.xml -print0 2>/dev/null |
  xargs -0 -r cat |
  awk '
    /<testcase[ >]/ { total++; open = 1; marked = 0 }
    /<testcase[^>]*\/>/ { open = 0 }
    (/<failure[ >]/ || /<error[ >]/) && open && !marked { failed++; marked = 1 }
    /<\/testcase>/ { open = 0 }
    END { printf "%d %d\n", total - failed, failed }
  '
