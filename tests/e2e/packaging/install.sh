#!/usr/bin/env bash
# Build and install as README's "Using it" says, from the source tree: configured with
# PSI_BUILD_TESTS=OFF (no cmocka looked for, no test or simulator built), built, installed
# into a prefix: PREFIX/bin holds psi-rebalancer and kubectl-psi and nothing else, and each
# prints its version and the build (git describe of the tree, as configured).
set -euo pipefail
src=${PSI_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 passes=0
pass() { echo "ok   - $*"; passes=$((passes + 1)); }
fail() { echo "FAIL - $*"; failures=$((failures + 1)); }
check() { local d=$1; shift; if "$@" >/dev/null; then pass "$d"; else fail "$d"; fi; }

cmake -S "$src" -B "$tmp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPSI_BUILD_TESTS=OFF >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log"; exit 1; }
check "configured without looking for cmocka" bash -c "! grep -qi cmocka '$tmp/configure.log' && ! grep -q '^CMOCKA' '$tmp/build/CMakeCache.txt'"
cmake --build "$tmp/build" -j2 >"$tmp/build.log" 2>&1 || { tail -30 "$tmp/build.log"; exit 1; }
check "no test and no simulator built" bash -c "[ ! -e '$tmp/build/tests' ] && [ ! -e '$tmp/build/hack/sim' ]"
cmake --install "$tmp/build" --prefix "$tmp/prefix" >/dev/null
check "PREFIX/bin holds psi-rebalancer and kubectl-psi, nothing else" \
  test "$(ls "$tmp/prefix/bin" | tr '\n' ' ')" = "kubectl-psi psi-rebalancer "
build=$(git -C "$src" describe --tags --always --dirty 2>/dev/null || echo unknown)
version=$(sed -n 's/^project(psi-rebalancer VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
check "psi-rebalancer --version: $version (build $build)" \
  test "$("$tmp/prefix/bin/psi-rebalancer" --version)" = "psi-rebalancer $version (build $build)"
check "kubectl-psi --version: $version (build $build)" \
  test "$("$tmp/prefix/bin/kubectl-psi" --version)" = "kubectl-psi $version (build $build)"
check "kubectl-psi --help names its commands" bash -c "'$tmp/prefix/bin/kubectl-psi' --help | grep -q '^  why NODE'"
echo "$passes passed, $failures failed"
((failures == 0))
