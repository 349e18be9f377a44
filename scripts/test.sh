#!/usr/bin/env bash
# The test command: installs what is needed, builds (the C++ tree and the
# Python package), runs every test that needs no GPU (ctest labels unit and
# nvrtc), then the ASan+UBSan build: unit tests, the CPU driver over mixed
# commands and 30 s of each fuzz target (scripts/sanitize.sh; skipped, saying
# so, where no clang 16 or newer could be installed).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
# The Python package, built as a wheel and installed as a user would (python.wheel checks the wheel).
start=$(date +%s)
rm -rf build/wheels
.venv/bin/python -m pip wheel -q --disable-pip-version-check --no-deps -w build/wheels .
.venv/bin/python -m pip install -q --disable-pip-version-check --force-reinstall --no-deps build/wheels/boo-*.whl
echo "test.sh: pip wheel . and its install took $(( $(date +%s) - start )) s"
cd build
ctest -L 'unit|nvrtc' --output-on-failure -j "$(nproc)"
cd ..
clang_found=""
for v in 19 18 17 16; do command -v "clang++-$v" >/dev/null && clang_found=1; done
if [ -n "$clang_found" ]; then
  scripts/sanitize.sh 30
else
  echo "test.sh: no clang++ 16 or newer: the ASan+UBSan and fuzz stage (scripts/sanitize.sh) did not run"
fi
