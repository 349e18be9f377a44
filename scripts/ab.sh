#!/usr/bin/env bash
# A/B of boo's kernels between source trees, on the GPU machine: builds boo-driver
# from each tree, times every command of a file with each build in turn (ROUNDS
# rounds, the trees alternating so drift hits all alike), and prints per command
# each tree's best mean time and its speed-up over the first tree.
#
# Here, before the device call: one tree per commit, in the carried .deps folder:
#   scripts/ab.sh --export base 9cceb5e~1   (git archive of the commit into .deps/ab/base)
# On the GPU machine (the working tree itself is "." and may be a tree of the list):
#   scripts/ab.sh benchmarks/norm_shapes.txt .deps/ab/base .
# The table goes to stdout and $OUT/ab.md; each tree's CSV and log per round to $AB_WORK
# (default /tmp/boo-ab: the device tool brings back at most 8 files from $OUT).
# AB_ARGS: options given to every tree's boo preload and boo-driver (e.g. "--impl gpu:conv:direct").
set -uo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--export" ]; then
  [ $# -eq 3 ] || { echo "usage: scripts/ab.sh --export NAME COMMIT" >&2; exit 2; }
  rm -rf ".deps/ab/$2" && mkdir -p ".deps/ab/$2" && git archive "$3" | tar -x -C ".deps/ab/$2"
  echo "exported $(git rev-parse --short=12 "$3") to .deps/ab/$2"
  exit
fi
[ $# -ge 3 ] || { echo "usage: scripts/ab.sh COMMANDS_FILE TREE TREE [TREE ...]" >&2; exit 2; }
commands="$1"; shift
OUT="${OUT:-$PWD/build-ab}"
WORK="${AB_WORK:-/tmp/boo-ab}"
ROUNDS="${ROUNDS:-2}"
read -r -a extra <<< "${AB_ARGS:-}"
mkdir -p "$OUT" "$WORK"
drivers=()
# An exported tree has no .deps: it uses this checkout's SQLite (the GPU machine has none installed).
sqlite=()
[ -f .deps/sqlite/sqlite3.h ] && sqlite=(-DBOO_SQLITE_INCLUDE_DIR="$PWD/.deps/sqlite" -DBOO_SQLITE_LIBRARY="$PWD/.deps/sqlite/libsqlite3.a")
for i in $(seq 1 $#); do
  tree="${!i}"
  build="$WORK/build$(cd "$tree" && pwd | tr / _)"  # one build folder per source tree, kept between runs
  # boo-driver alone: no tests (GoogleTest) and no Python extension to configure.
  if ! { cmake -S "$tree" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBOO_BUILD_TESTS=OFF "${sqlite[@]}" &&
         cmake --build "$build" -j16 --target boo-driver boo; } \
         > "$WORK/build-$i.log" 2>&1; then
    echo "build of $tree failed:"; tail -n 20 "$WORK/build-$i.log"; exit 1
  fi
  drivers+=("$build/tools/boo-driver")
done

# Every tree's kernels compiled first on every core (`boo preload`), into its own cache: compiling
# one kernel at a time inside the timed runs took most of an A/B's wall time (413 lines: over 7 minutes).
for i in "${!drivers[@]}"; do
  BOO_CACHE_DIR="/tmp/boo-ab-cache-$i" "$(dirname "${drivers[$i]}")/boo" preload "${extra[@]}" --commands-file "$commands" \
    -j "$(nproc)" > "$WORK/preload-$((i + 1)).log" 2>&1 || echo "preload of tree $((i + 1)) reported failures (see $WORK/preload-$((i + 1)).log)"
done

for round in $(seq 1 "$ROUNDS"); do
  for i in "${!drivers[@]}"; do
    # Each tree its own kernel cache: the trees' kernels differ under the same signature.
    BOO_CACHE_DIR="/tmp/boo-ab-cache-$i" "${drivers[$i]}" --backend boo "${extra[@]}" --commands-file "$commands" --iter 100 \
      --csv "$WORK/ab-$((i + 1))-$round.csv" > "$WORK/ab-$((i + 1))-$round.log" 2>&1
  done
done

python3 - "$WORK" "${#drivers[@]}" "$ROUNDS" "$@" <<'EOF' | tee "$OUT/ab.md"
import csv, math, sys
out, trees, rounds, names = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
best = [{} for _ in range(trees)]  # per tree: command -> best mean time over the rounds
order = []
for t in range(trees):
    for r in range(1, rounds + 1):
        with open(f"{out}/ab-{t + 1}-{r}.csv", newline="") as f:
            for row in csv.DictReader(f):
                cmd = row["arguments"]
                if cmd not in order:
                    order.append(cmd)
                try:
                    best[t][cmd] = min(best[t].get(cmd, math.inf), float(row["boo mean"]))
                except (KeyError, TypeError, ValueError):  # no timing: the command failed ("N.A.")
                    pass
print("| command | " + " | ".join(f"{n} us" for n in names) + " | " +
      " | ".join(f"{n} speed-up" for n in names[1:]) + " |")
print("|---" * (2 * trees) + "|")
speedups = [[] for _ in range(trees)]
for cmd in order:
    times = [b.get(cmd) for b in best]
    cells = [f"{x:.1f}" if x else "failed" for x in times]
    for t in range(1, trees):
        if times[0] and times[t]:
            speedups[t].append(times[0] / times[t])
            cells.append(f"{times[0] / times[t]:.3f}x")
        else:
            cells.append("-")
    print(f"| `{cmd}` | " + " | ".join(cells) + " |")
for t in range(1, trees):
    s = speedups[t]
    if s:
        print(f"geomean speed-up of {names[t]} over {names[0]}: "
              f"{math.exp(sum(map(math.log, s)) / len(s)):.3f}x over {len(s)} commands (min {min(s):.3f}, max {max(s):.3f})")
EOF
