#!/usr/bin/env bash
# The test command: installs what is needed, builds (the C++ tree and the
# Python package), and runs every test that needs no GPU (ctest labels unit
# and nvrtc).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
# The Python package, built and installed as a user would (pip install .).
start=$(date +%s)
.venv/bin/python -m pip install -q --disable-pip-version-check .
echo "test.sh: pip install . took $(( $(date +%s) - start )) s"
cd build
ctest -L 'unit|nvrtc' --output-on-failure -j "$(nproc)"
