#!/usr/bin/env bash
# Installs, from Debian's archive, whatever ringsim needs and is missing.
# Idempotent: with everything present it changes nothing and exits at once.
# Needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
  bazel-bootstrap      # Bazel 4.2.3, builds offline (see WORKSPACE)
  bazel-rules-java     # @rules_java for Bazel's own tools
  g++
  libc6-dev
  linux-libc-dev       # <linux/perf_event.h>
  googletest libgtest-dev libgmock-dev
  librapidcheck-dev
  libboost-fiber-dev   # with libboost-context
  libxxhash-dev
  nlohmann-json3-dev
  libcli11-dev
  linux-perf           # perf itself: the tests check that it reads our files
  libelf-dev           # build-ids from ELF notes (real/elf_build_id)
  libzstd-dev          # ringsim-record -z: PERF_RECORD_COMPRESSED (real/zstd_records)
  hotspot              # hotspot-perfparser: the tests check that it parses our files
  bzip2                # perf archive packs the build-id cache with tar cjf
  python3              # scripts/function_lengths.py, tests/fuzz/make_seeds.py
  clang-14             # --config=asan (ASan + UBSan) and --config=fuzz (libFuzzer targets, tests/fuzz)
  libclang-rt-14-dev   # libFuzzer's and the sanitizers' runtimes for clang-14
  libfuzzer-14-dev     # libFuzzer as a library (-lFuzzer), for fuzzing by hand
  universal-ctags      # function lengths (tests/function_length_test)
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
  else
    echo "setup: error: need root to install ${missing[*]} (run as root or install sudo)" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
