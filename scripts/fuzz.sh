#!/usr/bin/env bash
# Runs every fuzz target (fuzz/) for S seconds from the seed corpus (fuzz/make_seeds.py) and the
# corpus earlier runs grew under BUILD/fuzz-corpus. Exit 1 on the first crash, leak, sanitizer report
# or hang; the input that did it is left as BUILD/fuzz-findings/<target>-*.
# Usage: scripts/fuzz.sh [seconds per target, default 30] [build folder, default build-asan]
# (scripts/sanitize.sh builds the folder: ASan+UBSan, BOO_FUZZ=ON.)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
BUILD="${2:-build-asan}"
seeds="$BUILD/fuzz-seeds"
rm -rf "$seeds"
python3 fuzz/make_seeds.py "$seeds"
mkdir -p "$BUILD/fuzz-findings"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
for target in command_parse commands_file cache_record npy_writer; do
  corpus="$BUILD/fuzz-corpus/$target"
  mkdir -p "$corpus"
  log="$BUILD/fuzz-$target.log"
  if ! "$BUILD/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -max_len=16384 \
       -artifact_prefix="$BUILD/fuzz-findings/$target-" "$corpus" "$seeds/$target" > "$log" 2>&1; then
    tail -60 "$log"
    echo "fuzz.sh: $target found a failure (input in $BUILD/fuzz-findings/); log $log" >&2
    exit 1
  fi
  echo "fuzz.sh: $target: $(grep -E '^#[0-9]+' "$log" | tail -1)"
done
