#!/usr/bin/env bash
# Fills .deps/ (git-ignored) with what the GPU machine lacks, for the device
# tool's `carry`: GoogleTest's sources, cuDNN 9's graph and ops headers, cuBLASLt's headers, CUPTI's headers
# (in case the toolkit there lacks them), SQLite's header and static archive, the Python build tools' wheels, and the commit
# of the tree (the copy there has no .git). Run here before each GPU call:
#   scripts/prepare-gpu-carry.sh && <device run: scripts/gpu-check.sh ...> with carry [".deps"]
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deps/cudnn-include .deps/cupti-include .deps/cublaslt-include
[ -d .deps/googletest ] || cp -r /usr/src/googletest .deps/googletest
for h in cudnn_graph.h cudnn_ops.h cudnn_version.h; do
  src=$(ls /usr/local/cuda/include/$h /usr/include/$h /usr/include/x86_64-linux-gnu/$h 2>/dev/null | head -1 || true)
  if [ -n "$src" ]; then cp "$src" .deps/cudnn-include/; fi
done
cp /usr/local/cuda/include/cupti*.h .deps/cupti-include/ 2>/dev/null || true
mkdir -p .deps/sqlite
cp /usr/include/sqlite3.h /usr/lib/x86_64-linux-gnu/libsqlite3.a .deps/sqlite/
cp /usr/local/cuda/include/cublasLt.h /usr/local/cuda/include/cublas_api.h .deps/cublaslt-include/ 2>/dev/null || true
# The Python package's build tools (pure-Python wheels; the GPU machine has PyTorch but no PyPI).
if [ ! -d .deps/wheels ]; then
  python3 -m pip download -q --only-binary=:all: -d .deps/wheels \
    nanobind==2.4.0 scikit-build-core==0.10.7 pathspec packaging exceptiongroup
  # tomli (Python < 3.11) as its pure-Python wheel, whatever the Python there.
  python3 -m pip download -q --only-binary=:all: --no-deps --python-version 3.10 --platform any -d .deps/wheels tomli
fi
git rev-parse --short=12 HEAD > .deps/commit
echo "prepared .deps: $(ls .deps | tr '\n' ' ')"
