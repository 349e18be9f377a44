#!/usr/bin/env bash
# ASan+UBSan (clang): the unit tests, the CPU driver over tests/sanitize/mixed_commands.txt (good, bad,
# unsupported and help lines, with and without executor isolation) and a short run of every fuzz target.
# Usage: scripts/sanitize.sh [fuzz seconds per target, default 30]   (scripts/test.sh runs it when clang
# 16 or newer is installed; scripts/install-deps.sh installs it). A longer fuzz run: fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds="${1:-30}"
clang=""
for v in 19 18 17 16; do command -v "clang++-$v" >/dev/null && { clang="clang++-$v"; break; }; done
if [ -z "$clang" ]; then
  echo "sanitize.sh: needs clang++ 16 or newer (std::source_location); scripts/install-deps.sh installs clang-16" >&2
  exit 2
fi
start=$(date +%s)
BUILD=build-asan
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
python="$(command -v python3)"
[ -x .venv/bin/python ] && python="$PWD/.venv/bin/python"
cmake -S . -B "$BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$clang" \
  "${launcher[@]}" -DBOO_SANITIZE=address,undefined -DBOO_FUZZ=ON -DPython3_EXECUTABLE="$python" > "$BUILD.configure.log"
cmake --build "$BUILD" -j "$(nproc)" --target boo_unit_tests boo-driver fuzzers
echo "sanitize.sh: build took $(( $(date +%s) - start )) s"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=86"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

# The unit tests (gtest, host only; not those that run the tools this build does not make).
(cd "$BUILD" && ctest -L unit -E '^(driver|scripts|python|cache|runtime|install|report|tools)\.' -j "$(nproc)" --output-on-failure)

# The CPU driver over the mixed file: every line gets its verdict, nothing trips a sanitizer.
# An executor that a sanitizer stops shows as "died (exit 86)"; in this process the run ends with 86.
out="$BUILD/mixed"
mkdir -p "$out"
for mode in "--no-isolation" ""; do
  rm -f "$out/mixed.csv"
  set +e
  "$BUILD/tools/boo-driver" --backend cpu $mode --commands-file tests/sanitize/mixed_commands.txt \
    --csv "$out/mixed.csv" > "$out/mixed.log" 2>&1
  rc=$?
  set -e
  if [ $rc -ne 1 ] || grep -qE "AddressSanitizer|LeakSanitizer|runtime error:|exit 86|died" "$out/mixed.log" ||
     ! grep -q "24 command(s): 10 ok, 11 failed, 3 unsupported" "$out/mixed.log"; then
    tail -40 "$out/mixed.log"
    echo "sanitize.sh: the CPU driver over the mixed commands ${mode:-with isolation} failed (exit $rc)" >&2
    exit 1
  fi
done

# A short run of every fuzz target from the seed corpus.
scripts/fuzz.sh "$fuzz_seconds" "$BUILD"
echo "sanitize.sh: ASan+UBSan unit tests, mixed commands and fuzzing passed in $(( $(date +%s) - start )) s"
