#!/usr/bin/env bash
# Installs what boo needs to build and test on a fresh Debian machine with the
# CUDA toolkit: compilers (clang 16 for the sanitizer build) and CMake, GoogleTest, SQLite, Chromium (boo report's
# page is rendered in it), and a Python virtual environment (.venv) with the pinned PyPI packages of
# requirements-dev.txt.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v cmake >/dev/null || need_apt+=(cmake)
command -v g++ >/dev/null || need_apt+=(g++)
command -v ninja >/dev/null || need_apt+=(ninja-build)
[ -f /usr/include/gtest/gtest.h ] || need_apt+=(libgtest-dev)
command -v pkg-config >/dev/null || need_apt+=(pkg-config)  # install.consumer's pkg-config build
[ -f /usr/include/sqlite3.h ] || need_apt+=(libsqlite3-dev)  # the tuning database
python3 -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3-venv)
# clang 16 with libFuzzer and the sanitizer runtimes: scripts/sanitize.sh (clang 14, Debian 12's default,
# lacks std::source_location).
have_clang=""
for v in 19 18 17 16; do
  command -v "clang++-$v" >/dev/null && [ -d "/usr/lib/llvm-$v/lib/clang/$v/lib/linux" ] && have_clang=1
done
if [ -z "$have_clang" ] && apt-cache show clang-16 >/dev/null 2>&1; then need_apt+=(clang-16 libclang-rt-16-dev); fi
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
updated=""
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${need_apt[*]}"
  $sudo apt-get update -qq
  updated=1
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_apt[@]}"
fi
# Debian's chromium: report.chromium renders boo report's page headless. Not fatal: where it cannot be
# installed, that test is skipped and says so.
if ! command -v chromium >/dev/null; then
  echo "install-deps: apt-get install chromium"
  { [ -n "$updated" ] || $sudo apt-get update -qq; } &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null ||
    echo "install-deps: chromium could not be installed: the report.chromium test will be skipped"
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-dev.txt
