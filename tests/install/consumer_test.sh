#!/usr/bin/env bash
# boo installed like a library: `cmake --install` of the build tree into a
# fresh prefix, which is then moved (the package must be relocatable), checked
# (files, SONAME, no path into the build or source tree), and used alone:
# boo --version, boo-driver --version, boo report --help, examples/consumer built with
# find_package(boo CONFIG) (shared and static) and with pkg-config, and run.
#
#   consumer_test.sh BUILD_DIR SOURCE_DIR CXX_COMPILER CMAKE_GENERATOR VERSION LIBDIR INCLUDEDIR
set -euo pipefail
build=$1 source=$2 cxx=$3 generator=$4 version=$5 libdir=$6 includedir=$7
major_minor=${version%.*}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "consumer_test: FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/staged" >"$tmp/install.log"
mv "$tmp/staged" "$tmp/prefix"
prefix=$tmp/prefix

# What a consumer needs is there.
for f in bin/boo bin/boo-driver "$libdir/libboo.a" "$libdir/libboo.so" "$libdir/libboo.so.$major_minor" \
         "$libdir/libboo.so.$version" "$libdir/cmake/boo/booConfig.cmake" "$libdir/cmake/boo/booConfigVersion.cmake" \
         "$libdir/cmake/boo/booTargets.cmake" "$libdir/pkgconfig/boo.pc" share/boo/report/boo_report/__main__.py; do
  [ -e "$prefix/$f" ] || fail "$f was not installed"
done
diff <(cd "$source/include/boo" && ls) <(cd "$prefix/$includedir/boo" && ls) >/dev/null ||
  fail "$includedir/boo/ differs from include/boo/: $(diff <(cd "$source/include/boo" && ls) <(cd "$prefix/$includedir/boo" && ls) | tr '\n' ' ')"
[ ! -e "$prefix/boo" ] || fail "the Python extension was installed (it belongs to the wheel only)"
soname=$(readelf -d "$prefix/$libdir/libboo.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libboo.so.$major_minor" ] || fail "libboo's SONAME is '$soname', expected libboo.so.$major_minor"
for f in "$prefix/$libdir/libboo.so.$version" "$prefix/bin/boo" "$prefix/bin/boo-driver"; do
  if readelf -d "$f" | grep -Eq '\((RPATH|RUNPATH)\)'; then fail "$f has a run path: $(readelf -d "$f" | grep PATH)"; fi
done
# Relocatable: no text file names the build tree, the source tree or the staging prefix.
if leaks=$(grep -rlIF -e "$build" -e "$source" -e "$tmp/staged" "$prefix"); then
  fail "installed files name the build, source or staging folder: $leaks"
fi

# Each public header compiles on its own from the prefix (none needs boo's sources).
for h in "$prefix/$includedir"/boo/*.hpp; do
  echo "#include \"boo/$(basename "$h")\"" | "$cxx" -std=c++20 -fsyntax-only -I"$prefix/$includedir" -x c++ - ||
    fail "boo/$(basename "$h") does not compile alone against the prefix"
done

# The tools report the version and the commit they were built from.
boo_version=$("$prefix/bin/boo" --version)
driver_version=$("$prefix/bin/boo-driver" --version)
[[ "$boo_version" =~ ^boo\ $version\ \(commit\ [0-9a-z-]+\)$ ]] || fail "boo --version printed '$boo_version'"
[ "$driver_version" = "boo-driver ${boo_version#boo }" ] || fail "boo-driver --version printed '$driver_version'"

# boo report finds its Python package in the moved prefix (its --help needs no matplotlib).
report_help=$("$prefix/bin/boo" report --help) || fail "boo report --help failed: $report_help"
[[ "$report_help" == "usage: boo report RUN.csv"* ]] || fail "boo report --help printed '$report_help'"

# find_package(boo CONFIG) from this prefix only.
cmake -S "$source/examples/consumer" -B "$tmp/consumer" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
      >"$tmp/configure.log" || { cat "$tmp/configure.log"; fail "the consumer did not configure"; }
grep -q "boo $version from $prefix/$libdir/cmake/boo" "$tmp/configure.log" ||
  fail "find_package(boo) did not find boo $version in the prefix: $(grep 'boo ' "$tmp/configure.log")"
cmake --build "$tmp/consumer" >"$tmp/build.log" || { cat "$tmp/build.log"; fail "the consumer did not build"; }
for exe in boo_consumer boo_consumer_static; do
  out=$("$tmp/consumer/$exe") || fail "$exe failed: $out"
  echo "$exe: $out"
  [[ "$out" == "${boo_version}"$'\n'*"elements as expected" ]] || fail "$exe printed '$out'"
done
[ "$(readelf -d "$tmp/consumer/boo_consumer" | grep -c 'libboo.so')" -eq 1 ] || fail "boo_consumer does not load libboo.so"

# pkg-config (scripts/install-deps.sh installs it; a machine without it skips this part).
if command -v pkg-config >/dev/null; then
  export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
  [ "$(pkg-config --modversion boo)" = "$version" ] || fail "pkg-config --modversion boo: $(pkg-config --modversion boo)"
  # shellcheck disable=SC2046  # pkg-config's flags are words
  "$cxx" -std=c++20 -o "$tmp/pc_consumer" "$source/examples/consumer/main.cpp" $(pkg-config --cflags --libs boo) \
         -Wl,-rpath,"$(pkg-config --variable=libdir boo)"
  out=$("$tmp/pc_consumer") || fail "the pkg-config build failed: $out"
  echo "pkg-config: $out"
  [[ "$out" == *"elements as expected" ]] || fail "the pkg-config build printed '$out'"
else
  echo "consumer_test: no pkg-config on this machine: the pkg-config build was not checked"
fi
echo "consumer_test: boo $version installs, relocates and builds consumers from $prefix alone"
