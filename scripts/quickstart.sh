#!/usr/bin/env bash
# The main job: installs what is needed, builds, and runs boo-driver on the
# sample workload (examples/sample-commands.txt), on the GPU when there is one,
# on the CPU reference otherwise. Extra arguments go to boo-driver.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec build/tools/boo-driver --commands-file examples/sample-commands.txt "$@"
