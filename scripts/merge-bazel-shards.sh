#!/usr/bin/env bash
# The merged summary of a sharded campaign test (shard_count in its BUILD
# rule: //sim:campaign_test), after `bazel test`: each shard wrote its
# summary into its undeclared outputs (campaign-summary.json, zipped by
# Bazel into outputs.zip); this unpacks them and runs `campaign merge`.
#
#   bazel test //sim:campaign_test && scripts/merge-bazel-shards.sh [TARGET]
#
# TARGET defaults to //sim:campaign_test. Exit status: the merge's.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:-//sim:campaign_test}"
rel="${target#//}"
rel="${rel/://}"
logs="$(bazel info bazel-testlogs 2>/dev/null)/$rel"
command -v unzip >/dev/null || { echo "merge-bazel-shards: error: unzip is missing (apt-get install unzip)" >&2; exit 69; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
files=()
for zip in "$logs"/shard_*_of_*/test.outputs/outputs.zip "$logs"/test.outputs/outputs.zip; do
  [ -f "$zip" ] || continue
  shard=$(basename "$(dirname "$(dirname "$zip")")")
  mkdir -p "$work/$shard"
  unzip -q -o "$zip" campaign-summary.json -d "$work/$shard"
  files+=("$work/$shard/campaign-summary.json")
done
if [ "${#files[@]}" -eq 0 ]; then
  echo "merge-bazel-shards: error: no shard summaries under $logs (run bazel test $target first)" >&2
  exit 66
fi
bazel build //sim:campaign >/dev/null 2>&1
exec "$(bazel info bazel-bin 2>/dev/null)/sim/campaign" merge "${files[@]}"
