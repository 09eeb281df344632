#!/usr/bin/env bash
# Builds the recorder (//real:record) and installs it as a plain binary:
#   scripts/install-record.sh [DEST]      (default /usr/local/bin/ringsim-record)
# Then: ringsim-record [OPTIONS] -- COMMAND [ARGS...]  (docs/recorder.md).
# Extra Bazel flags may be given in BAZEL_FLAGS (e.g. --output_base=...).
set -euo pipefail
cd "$(dirname "$0")/.."

dest="${1:-/usr/local/bin/ringsim-record}"
# shellcheck disable=SC2086
bazel ${BAZEL_STARTUP_FLAGS:-} build ${BAZEL_FLAGS:-} //real:record
# shellcheck disable=SC2086
bin="$(bazel ${BAZEL_STARTUP_FLAGS:-} info ${BAZEL_FLAGS:-} bazel-bin 2>/dev/null)/real/record"
if [ ! -x "$bin" ]; then
  echo "install-record: error: $bin was not built" >&2
  exit 1
fi
install -D -m 0755 "$bin" "$dest"
echo "install-record: installed $dest"
