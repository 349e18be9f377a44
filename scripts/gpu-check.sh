#!/usr/bin/env bash
# The one script for the GPU machine: builds boo there, runs the GPU tests, the
# numerics over the workloads, and prints one short table at the end.
# Usage (from the repository root): scripts/gpu-check.sh [stage ...]
#   stages: build info tests python pydebug numerics cache sanitizer perf norms full resnet gradcheck split
#   (default: all but pydebug, full, resnet, gradcheck and split; resnet and gradcheck run inside python:
#   ResNet-50 training with boo_inductor vs inductor, and one step's gradients per parameter against float32
#   eager; split runs the Python stages and the driver stages on two GPUs at once, see below)
#   full: the complete benchmark of one workload (FULL_FILE, default BOO's 413
#   convs): boo and cuDNN, --verify-numerics, CSV and Perfetto trace, with its
#   wall time, numerics pass rate and trace size.
# Logs go to $OUT (the device tool's output folder) or build-gpu/logs.
# Exit status: 0 when every stage run passed; 1 when any failed (a failing or missing test, a numerics
# failure or shortfall, a timeout, a sanitizer error, a crash), naming the failed stages last.
# BOO_TEST_FAULT=<fault> (shift, scale, ...: src/bench/fault_backend.hpp) makes the boo backend's results
# deliberately wrong: the numerics stage must then fail, naming the failing lines.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/build-gpu/logs}"
mkdir -p "$OUT"
BUILD=build-gpu
# Logs read only on failure (configure, build, preload, pip) stay on the machine: the device
# tool brings back at most 8 files from $OUT. A failing stage prints their tails.
AUX="$BUILD/aux-logs"
mkdir -p "$AUX"
# The tree arrives without .git; the caller may leave the commit in .deps/commit.
[ -f .deps/commit ] && export BOO_GIT_COMMIT="$(cat .deps/commit)"
COMMIT="${BOO_GIT_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}"
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build info tests python numerics cache sanitizer perf norms)
table=()
failed_stages=()
# This is a GPU machine: a GPU test that finds no GPU fails instead of skipping.
export BOO_REQUIRE_GPU=1

want() { local s; for s in "${stages[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
# Each row is also printed at once, so a run cut short still shows what it finished.
row() { table+=("$(printf '%-34s %s' "$1" "$2")"); echo "[gpu-check] ${table[-1]}"; }
# A failed stage: its row says FAILED and the script exits 1.
fail() { failed_stages+=("$1"); row "$1" "FAILED: $2"; }

if want build; then
  gtest_arg=()
  [ -d .deps/googletest ] && gtest_arg=(-DBOO_GTEST_SOURCE_DIR="$PWD/.deps/googletest")
  start=$(date +%s)
  # BOO_WITH_CUDNN=ON: the perf stages compare against cuDNN, so its headers must be there.
  if cmake -S . -B $BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release -DBOO_WITH_CUDNN=ON "${gtest_arg[@]}" \
       -DPython3_EXECUTABLE="$(command -v python3)" >"$AUX/configure.log" 2>&1 &&
     cmake --build $BUILD -j16 >"$AUX/build.log" 2>&1; then
    row "build" "ok ($(( $(date +%s) - start )) s)"
  else
    row "build" "FAILED (tail of $AUX/build.log below)"
    tail -n 30 "$AUX/configure.log" "$AUX/build.log"
    printf '%s\n' "${table[@]}"
    exit 1
  fi
fi

if want info; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/info.log" 2>&1
  $BUILD/tools/boo info >> "$OUT/info.log" 2>&1 || fail "info" "boo info exited $?"
  cat "$OUT/info.log"
  row "device" "$(head -1 "$OUT/info.log")"
fi

if want tests; then
  # (python: the python stage installs the package first, then runs those tests)
  (cd $BUILD && ctest -L gpu -LE 'numerics|python' -V -j 4) > "$OUT/gpu-tests.log" 2>&1
  rc=$?
  skipped=$(grep -c '(Skipped)' "$OUT/gpu-tests.log")
  row "ctest -L gpu" "$(grep -E 'tests passed|tests failed' "$OUT/gpu-tests.log" | tail -1), $skipped skipped"
  [ $rc -ne 0 ] && fail "ctest -L gpu" "ctest exited $rc"
  [ "$skipped" -ne 0 ] && fail "ctest -L gpu" "$skipped tests skipped on a GPU machine"
  grep -E "cached module load|MiB after the first command|\*\*\*Failed|executor isolation holds" "$OUT/gpu-tests.log" | head -8 | sed 's/^/  /'
fi

# python: pip install . with the machine's PyTorch (build tools from .deps/wheels), then the
# package's tests on CUDA tensors.
if want python; then
  start=$(date +%s)
  # No index anywhere: the GPU machine has no network, and pip would otherwise wait on PyPI.
  pipq=(python3 -m pip install --no-index --disable-pip-version-check)
  # The pinned build tools (pyproject.toml), not the machine's own newer ones: what a user's
  # isolated `pip install .` gets.
  if timeout 300 "${pipq[@]}" -q --find-links .deps/wheels "scikit-build-core==0.10.7" "nanobind==2.4.0" > "$OUT/python.log" 2>&1 &&
     CMAKE_BUILD_PARALLEL_LEVEL=16 timeout 400 "${pipq[@]}" -v --no-build-isolation --no-deps . > "$AUX/pip-install.log" 2>&1; then
    row "pip install ." "ok ($(( $(date +%s) - start )) s)"
    export PYTHONUNBUFFERED=1  # a killed or crashed test still leaves its output
    (cd /tmp && CUDA_VISIBLE_DEVICES="${PY_GPU:-0}" PYTHONFAULTHANDLER=1 timeout 120 \
       python3 "$OLDPWD/tests/python/gpu_smoke.py") >> "$OUT/python.log" 2>&1
    rc=$?
    row "python smoke" "exit $rc $(grep -E 'boo.ops.conv on cuda' "$OUT/python.log" | tail -1)"
    [ $rc -ne 0 ] && fail "python smoke" "exit $rc"
    (cd /tmp && CUDA_VISIBLE_DEVICES="${PY_GPU:-0}" PYTHONFAULTHANDLER=1 timeout 300 \
       python3 "$OLDPWD/examples/python_example.py" cuda) >> "$OUT/python.log" 2>&1
    rc=$?
    row "python example (README)" "exit $rc"
    [ $rc -ne 0 ] && fail "python example (README)" "exit $rc"
    # PY_GPU: the GPU the package's tests use (the other stages may be timing on GPU 0).
    # A hang prints every thread's stack (faulthandler on SIGABRT) instead of eating the run.
    (cd /tmp && CUDA_VISIBLE_DEVICES="${PY_GPU:-0}" PYTHONFAULTHANDLER=1 timeout -s ABRT 420 \
       python3 "$OLDPWD/tests/python/test_torch_ops.py" cuda) >> "$OUT/python.log" 2>&1
    rc=$?
    row "python tests (cuda)" "exit $rc, $(grep -E '^(OK|FAILED)' "$OUT/python.log" | tail -1), $(grep -E '^Ran ' "$OUT/python.log" | tail -1)"
    [ $rc -ne 0 ] && fail "python tests (cuda)" "exit $rc"
    (cd /tmp && CUDA_VISIBLE_DEVICES="${PY_GPU:-0}" PYTHONFAULTHANDLER=1 timeout -s ABRT 300 \
       python3 "$OLDPWD/tests/python/test_convergence.py" cuda) >> "$OUT/python.log" 2>&1
    rc=$?
    row "python convergence (cuda)" "exit $rc, $(grep -E '^cuda autocast' "$OUT/python.log" | tr '\n' ' ')"
    [ $rc -ne 0 ] && fail "python convergence (cuda)" "exit $rc"
    (cd /tmp && PYTHONFAULTHANDLER=1 timeout -s ABRT 180 python3 "$OLDPWD/tests/python/test_ddp.py") >> "$OUT/python.log" 2>&1
    rc=$?
    # 77: fewer than two GPUs, the test did not run (SKIPPED, not passed and not failed).
    case $rc in
      0) row "python DDP" "$(grep -E 'DDP on' "$OUT/python.log" | tail -1)" ;;
      77) row "python DDP" "SKIPPED ($(grep -E 'SKIPPED' "$OUT/python.log" | tail -1))" ;;
      *) fail "python DDP" "exit $rc $(grep -E 'Error|FAILED' "$OUT/python.log" | tail -1)" ;;
    esac
    (cd /tmp && CUDA_VISIBLE_DEVICES="${PY_GPU:-0}" timeout 120 python3 "$OLDPWD/benchmarks/python_overhead.py") >> "$OUT/python.log" 2>&1 ||
      fail "python overhead benchmark" "exit $?"
    grep -E '^(kernel|boo|torch)' "$OUT/python.log" | sed 's/^/  /'
    if want resnet; then
      (cd /tmp && CUDA_VISIBLE_DEVICES="${PY_GPU:-0}" PYTHONFAULTHANDLER=1 timeout -s ABRT 500 \
         python3 "$OLDPWD/benchmarks/resnet50_train.py") > "$OUT/resnet50.log" 2>&1
      grep -E 'median step|largest loss' "$OUT/resnet50.log" | sed 's/^/  /'
    fi
    if want gradcheck; then
      (cd /tmp && CUDA_VISIBLE_DEVICES="${PY_GPU:-0}" PYTHONFAULTHANDLER=1 timeout -s ABRT 300 \
         python3 "$OLDPWD/benchmarks/resnet50_train.py" --grad-check) > "$OUT/resnet50-grads.log" 2>&1
      grep -E 'median relative' "$OUT/resnet50-grads.log" | sed 's/^/  /'
    fi
  else
    fail "pip install ." "or timed out (tails of python.log and $AUX/pip-install.log below)"
    tail -n 20 "$OUT/python.log" "$AUX/pip-install.log"
  fi
fi

# pydebug: the Python package's smallest GPU use under cuda-gdb: a crash in the
# extension prints a native backtrace (needs the python stage's install first).
if want pydebug; then
  (cd /tmp && CUDA_VISIBLE_DEVICES="${PY_GPU:-0}" timeout 240 cuda-gdb -q -batch -ex run -ex bt \
     --args python3 "$OLDPWD/tests/python/gpu_smoke.py") > "$OUT/pydebug.log" 2>&1
  row "python smoke under cuda-gdb" "$(grep -E 'boo.ops.conv on cuda|SIGSEGV|signal' "$OUT/pydebug.log" | head -1)"
  grep -E '^#[0-9]+ ' "$OUT/pydebug.log" | head -25 | sed 's/^/  /'
fi

# numerics: the given files (default: the conv and norm matrices, the TF32 lines, the focus list of past
# regressions, the examples and BOO's sample; the 413/257 workloads take ~5 min each: name them when loaders change).
NUMERICS_FILES="${NUMERICS_FILES:-tests/gpu/conv_matrix.txt tests/gpu/tf32_lines.txt tests/gpu/focus.txt tests/gpu/norm_matrix.txt examples/sample-commands.txt workloads/boo-sample.txt}"
# Each list's run leaves its CSV and log (numerics-runs.tgz) and one record of every list (numerics.md:
# commit, device, counts, failing lines; scripts/numerics_record.py) to commit under docs/perf/. A list
# fails on any failing line and on any command without a result (a timeout or crash cut the run short).
if want numerics; then
  export BOO_CACHE_DIR="$PWD/$BUILD/cache"
  runs="$AUX/numerics"
  rm -rf "$runs" && mkdir -p "$runs"
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  pairs=()
  for wl in $NUMERICS_FILES; do
    name=$(basename "$wl" .txt)
    start=$(date +%s)
    $BUILD/tools/boo preload --commands-file "$wl" -j 16 > "$AUX/preload-$name.log" 2>&1
    # The norm matrix's 772 signatures would each build cuDNN's runtime-compiled norm engines
    # (~1 s apiece) for the spread comparison: there the documented tolerance bounds the spread.
    vendor=()
    case "$name" in *norm_matrix*) vendor=(--numerics-vendor none) ;; esac
    timeout "${NUMERICS_TIMEOUT:-900}" $BUILD/tools/boo-driver --backend boo --commands-file "$wl" --verify-numerics -t 0 \
      "${vendor[@]}" --csv-extra --csv "$runs/$name.csv" ${NUMERICS_ARGS:-} > "$runs/$name.log" 2>&1
    rc=$?
    pairs+=("$wl=$runs/$name.csv")
    python3 scripts/numerics_record.py --commit "$COMMIT" --device "$gpu" --title "$name" "$wl=$runs/$name.csv" \
      > "$runs/$name.md" 2>&1
    record=$?
    counts=$(grep -E '^\| `' "$runs/$name.md" | awk -F' *[|] *' '{print $4 " of " $3 " pass, " $5 " fail, " $6 " unsupported, " $7 " no result"}')
    row "numerics $name" "$counts ($(( $(date +%s) - start )) s, driver exit $rc)"
    if [ $rc -eq 124 ]; then
      fail "numerics $name" "timed out after ${NUMERICS_TIMEOUT:-900} s (NUMERICS_TIMEOUT)"
    elif [ $record -ne 0 ] || [ $rc -ne 0 ]; then
      fail "numerics $name" "driver exit $rc; failing lines (re-run each as is):"
    fi
    grep -E '^- ' "$runs/$name.md" | head -12 | sed 's/^/  /'
  done
  python3 scripts/numerics_record.py --commit "$COMMIT" --device "$gpu" --title "scripts/gpu-check.sh numerics" \
    "${pairs[@]}" > "$OUT/numerics.md" 2>&1
  tar czf "$OUT/numerics-runs.tgz" -C "$runs" .
fi

if want cache; then
  cache=$(mktemp -d)
  first=$($BUILD/tools/boo-driver --commands-file workloads/boo-sample.txt --cache-dir "$cache" -t 0 2>&1 | grep 'kernels compiled')
  second=$($BUILD/tools/boo-driver --commands-file workloads/boo-sample.txt --cache-dir "$cache" -t 0 2>&1 | grep 'kernels compiled')
  row "driver 1st process" "${first#boo-driver: }"
  row "driver 2nd process" "${second#boo-driver: }"
  [ -z "$first" ] || [ -z "$second" ] && fail "cache" "a driver process printed no kernel counts"
  $BUILD/tools/boo preload --commands-file workloads/boo-conv-413.txt --cache-dir "$cache" -j 16 > "$AUX/preload.log" 2>&1 ||
    fail "preload boo-conv-413" "exit $?"
  row "preload boo-conv-413 (GPU)" "$(grep -E '^compiled=' "$AUX/preload.log")"
  rm -rf "$cache"
fi

# sanitizer: compute-sanitizer memcheck over a representative subset of kernels.
if want sanitizer; then
  export BOO_CACHE_DIR="$PWD/$BUILD/cache"
  if command -v compute-sanitizer >/dev/null; then
    compute-sanitizer --tool memcheck --error-exitcode 3 $BUILD/tools/boo-driver --backend boo \
      --commands-file tests/gpu/sanitizer_subset.txt -t 0 > "$OUT/sanitizer.log" 2>&1
    rc=$?
    row "compute-sanitizer memcheck" "exit $rc, $(grep -c 'Invalid' "$OUT/sanitizer.log") invalid accesses; $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer.log" | tail -1)"
    [ $rc -ne 0 ] && fail "compute-sanitizer memcheck" "exit $rc (3: memcheck found errors; else the driver failed)"
  else
    fail "compute-sanitizer memcheck" "compute-sanitizer is not on the PATH: the stage did not run"
  fi
fi

# perf: boo vs cuDNN over the given workloads (default: BOO's 413 convs), one CSV each.
PERF_FILES="${PERF_FILES:-workloads/boo-conv-413.txt}"
PERF_ITER="${PERF_ITER:-20}"
if want perf; then
  export BOO_CACHE_DIR="$PWD/$BUILD/cache"
  for wl in $PERF_FILES; do
    name=$(basename "$wl" .txt)
    start=$(date +%s)
    $BUILD/tools/boo preload --commands-file "$wl" -j 16 > "$AUX/preload-$name.log" 2>&1
    $BUILD/tools/boo-driver --commands-file "$wl" --backend boo --backend cudnn --iter "$PERF_ITER" \
      --csv-extra --csv "$OUT/perf-$name.csv" > "$OUT/perf-$name.log" 2>&1 || fail "perf $name" "boo-driver exit $? (see perf-$name.log)"
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
    case "$gpu" in *H200*) bw=4.8 ;; *) bw=3.35 ;; esac
    python3 scripts/perf_table.py "$OUT/perf-$name.csv" --device "$gpu" --peak-tflops 989.4 --bandwidth-tbs $bw \
      --l2 rotated --title "$name, commit $COMMIT, $(date -u +%Y-%m-%d)" > "$OUT/perf-$name.md" ||
      fail "perf $name table" "perf_table.py exit $?"
    row "perf $name ($(( $(date +%s) - start )) s)" "$(grep -E '^\| all' "$OUT/perf-$name.md")"
    grep -E '^\| (forward|backward)' "$OUT/perf-$name.md" | head -4 | sed 's/^/  /'
  done
fi

# norms: boo's norm kernels on benchmarks/norm_shapes.txt (issue 6's row norms, issue 19's ResNet-50 batch norms
# and SD-UNet group norms) against cuDNN, PyTorch (eager, compile) and a copy.
if want norms; then
  export BOO_CACHE_DIR="$PWD/$BUILD/cache"
  $BUILD/tools/boo-driver --backend boo --backend cudnn --commands-file benchmarks/norm_shapes.txt --csv-extra --csv "$OUT/norms-boo.csv" \
    > "$OUT/norms-boo.log" 2>&1 || fail "norms boo-driver" "exit $?"
  python3 benchmarks/torch_norms.py --out "$OUT/norms-torch.csv" > "$OUT/norms-torch.log" 2>&1 || fail "norms torch" "exit $?"
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  python3 benchmarks/norm_table.py "$OUT/norms-boo.csv" "$OUT/norms-torch.csv" --device "$gpu" \
    --title "norms, commit $COMMIT, $(date -u +%Y-%m-%d)" > "$OUT/norms.md" 2>&1
  row "norms" "$(grep -cE '^\| (layernorm|rmsnorm|batchnorm|groupnorm) ' "$OUT/norms.md") rows in norms.md"
  grep -E '^\| (layernorm|rmsnorm|batchnorm|groupnorm) ' "$OUT/norms.md" | cut -d'|' -f2-9 | head -80 | sed 's/^/  /'
fi

# split: on a host with two GPUs, the Python stages on GPU 1 and the driver stages on GPU 0 at the
# same time, each branch under SPLIT_TIMEOUT seconds, then one archive of both branches' logs
# (split-logs.tgz: the device tool brings back at most 8 files). Run after build.
if want split; then
  split_timeout="${SPLIT_TIMEOUT:-480}"
  mkdir -p "$OUT/gpu1-python" "$OUT/gpu0-driver"
  (OUT="$OUT/gpu1-python" PY_GPU=1 timeout "$split_timeout" "$0" ${SPLIT_PYTHON_STAGES:-python resnet gradcheck} \
     > "$OUT/gpu1-python/summary.txt" 2>&1) &
  python_branch=$!
  (OUT="$OUT/gpu0-driver" CUDA_VISIBLE_DEVICES=0 timeout "$split_timeout" "$0" \
     ${SPLIT_DRIVER_STAGES:-numerics perf norms sanitizer} > "$OUT/gpu0-driver/summary.txt" 2>&1) &
  driver_branch=$!
  wait $python_branch || fail "split: python branch" "exit $? (124: SPLIT_TIMEOUT)"
  wait $driver_branch || fail "split: driver branch" "exit $? (124: SPLIT_TIMEOUT)"
  for branch in gpu1-python gpu0-driver; do
    echo "--- $branch"
    grep -v '^\[gpu-check\]' "$OUT/$branch/summary.txt" | tail -n 40
  done
  tar czf "$OUT/split-logs.tgz" -C "$OUT" gpu1-python gpu0-driver && rm -rf "$OUT/gpu1-python" "$OUT/gpu0-driver"
  row "split" "logs in split-logs.tgz"
fi

# full: the issue-5 acceptance run over one workload.
FULL_FILE="${FULL_FILE:-workloads/boo-conv-413.txt}"
if want full; then
  export BOO_CACHE_DIR="$PWD/$BUILD/cache"
  name=$(basename "$FULL_FILE" .txt)
  trace="$PWD/$BUILD/full-$name.json"
  $BUILD/tools/boo preload --commands-file "$FULL_FILE" -j 16 > "$AUX/preload-full.log" 2>&1
  start=$(date +%s)
  # FULL_ARGS: more driver options, e.g. --gpu-id -1 to spread the run over every GPU.
  $BUILD/tools/boo-driver --commands-file "$FULL_FILE" --backend boo --backend cudnn --verify-numerics \
    --csv-extra --csv "$OUT/full-$name.csv" --trace "$trace" ${FULL_ARGS:-} > "$OUT/full-$name.log" 2>&1
  rc=$?
  row "full $name" "exit $rc, wall $(( $(date +%s) - start )) s; $(tail -1 "$OUT/full-$name.log")"
  [ $rc -ne 0 ] && fail "full $name" "boo-driver exit $rc"
  python3 - "$OUT/full-$name.csv" "$trace" "$FULL_FILE" <<'PY' | while read -r line; do row "  full check" "$line"; done
import csv, json, os, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
commands = [l for l in open(sys.argv[3]) if l.strip() and not l.lstrip().startswith("#")]
passed = sum(r.get("numerics_pass") == "PASS" for r in rows)
print(f"CSV rows {len(rows)} for {len(commands)} commands; numerics pass {passed}/{len(rows)}")
t = json.load(open(sys.argv[2]))
ev = t["traceEvents"]
kernels = sum(e.get("cat") == "kernel" for e in ev)
spans = sum(e.get("cat") == "command" for e in ev)
print(f"trace: valid JSON, {os.path.getsize(sys.argv[2]) >> 20} MiB, {kernels} kernels, {spans} command spans")
PY
  if [ -f "$OUT/full-$name.csv" ]; then
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
    case "$gpu" in *H200*) bw=4.8 ;; *) bw=3.35 ;; esac
    l2=rotated
    case " ${FULL_ARGS:-} " in *" --flush-l2 "*) l2=flushed ;; esac
    python3 scripts/perf_table.py "$OUT/full-$name.csv" --device "$gpu" --peak-tflops 989.4 --bandwidth-tbs $bw \
      --l2 $l2 --title "$name (full run), commit $COMMIT, $(date -u +%Y-%m-%d)" > "$OUT/full-$name.md"
    row "full $name perf" "$(grep -E '^\| all' "$OUT/full-$name.md")"
  fi
fi

echo
echo "=== gpu-check summary ($(date -u +%Y-%m-%dT%H:%MZ), commit $COMMIT${BOO_TEST_FAULT:+, BOO_TEST_FAULT=$BOO_TEST_FAULT}) ==="
printf '%s\n' "${table[@]}"
if [ ${#failed_stages[@]} -gt 0 ]; then
  echo "gpu-check: FAILED (${#failed_stages[@]}): $(printf '%s; ' "${failed_stages[@]}")"
  exit 1
fi
echo "gpu-check: every stage passed"
