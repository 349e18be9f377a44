#!/usr/bin/env bash
# Configures and builds boo in build/ (Release). Usage: scripts/build.sh [-jN]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${1:--j$(nproc)}"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$PWD/.venv/bin/python"
fi
cmake --build build "$jobs"
