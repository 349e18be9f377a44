#!/usr/bin/env bash
# The test command: installs what is needed, builds, and runs every test that
# needs no GPU (ctest labels unit and nvrtc).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cd build
ctest -L 'unit|nvrtc' --output-on-failure -j "$(nproc)"
