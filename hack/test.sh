#!/usr/bin/env bash
# The project's test command: install dependencies, build, and run every test (unit and
# end-to-end against a test bed of real upstream components), then the unit and e2e tests
# again under AddressSanitizer and UndefinedBehaviorSanitizer.
#
#   hack/test.sh            everything
#   hack/test.sh -L unit    only what ctest's -L selects (any ctest arguments pass through)
set -euo pipefail
cd "$(dirname "$0")/.."

hack/deps.sh
hack/tools/build.sh >/dev/null

run() { # run BUILD_DIR CMAKE_ARGS... -- CTEST_ARGS...
  local dir=$1; shift
  local cmake_args=()
  while (($#)) && [ "$1" != -- ]; do cmake_args+=("$1"); shift; done
  shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug "${cmake_args[@]+"${cmake_args[@]}"}" >/dev/null
  cmake --build "$dir" -j2
  # A test bed left over from an interrupted run is stopped and removed first.
  hack/cluster/down --dir "$dir/testbed" --purge >/dev/null 2>&1 || true
  ctest --test-dir "$dir" --output-on-failure "$@"
}

run build -- "$@"
run build-asan -DPSI_SANITIZE=ON -- "$@"
