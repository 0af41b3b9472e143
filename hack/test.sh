#!/usr/bin/env bash
# The project's test command: install dependencies, build, and run every test.
#  - the plain build (build/): the unit tests, and the valgrind leak check of a long watch
#    session (valgrind cannot run a sanitized binary);
#  - the sanitizer build (build-asan/, AddressSanitizer + UndefinedBehaviorSanitizer): the
#    unit tests again and every end-to-end test against test beds of real upstream
#    components, so each e2e test runs once, and under the sanitizers. There are three test
#    beds (CMake's PSI_E2E_LANES), handed out by ctest's resource allocation (the build's
#    testbeds.json): each e2e test takes a free bed, the longest first, and PSI_TEST_JOBS
#    (default 3: ctest -j) tests run at once;
#  - the thread sanitizer build (build-tsan/, ThreadSanitizer): the unit tests and the
#    leader-election and monitoring e2e tests, one after the other against one test bed;
#  - the analyzer build (build-analyze/, GCC -fanalyzer over what ships): every finding
#    triaged in hack/analyzer-triage.txt (hack/analyze.sh);
#  - the fuzz build (build-fuzz/, clang, libFuzzer): each target of tests/fuzz for 12 s
#    (hack/fuzz.sh; a longer run of one target: hack/fuzz.sh TARGET SECONDS).
#
#   hack/test.sh            everything
#   hack/test.sh -L unit    only what ctest selects, in both builds (arguments pass to ctest)
set -euo pipefail
cd "$(dirname "$0")/.."

hack/deps.sh
hack/tools/build.sh >/dev/null

# run BUILD_DIR CMAKE_ARGS... -- CTEST_ARGS...: configure, build, test, the test beds of
# BUILD_DIR/testbeds.json handed out to the e2e tests (with one_bed=1: no resource spec, only
# BUILD_DIR/testbed comes up, for a single e2e test)
run() {
  local dir=$1; shift
  local cmake_args=()
  while (($#)) && [ "$1" != -- ]; do cmake_args+=("$1"); shift; done
  shift
  hack/configure.sh "$dir" -DCMAKE_BUILD_TYPE=Debug "${cmake_args[@]+"${cmake_args[@]}"}"
  cmake --build "$dir" -j2
  # Test beds left over from an interrupted run are stopped and removed first.
  local bed
  for bed in "$dir"/testbed*/; do
    [ -d "$bed" ] && { hack/cluster/down --dir "$bed" --purge >/dev/null 2>&1 || true; }
  done
  local spec=(--resource-spec-file "$PWD/$dir/testbeds.json")
  [ "${one_bed:-0}" = 1 ] && spec=()
  ctest --test-dir "$dir" --output-on-failure -j "${PSI_TEST_JOBS:-3}" "${spec[@]+"${spec[@]}"}" "$@"
}

if (($#)); then
  run build -- "$@"
  run build-asan -DPSI_SANITIZE=ON -- "$@"
  exit
fi
run build -- -L unit
hack/analyze.sh
one_bed=1 run build -- -R '^kube_informer_valgrind$'
run build-asan -DPSI_SANITIZE=ON --
# Under ThreadSanitizer: the C unit tests (the server tests drive the serving threads), then
# the e2e tests of the threads that share state with the event loop (leader election, the
# metrics and health endpoints) on one bed, one after the other: each checks on exit that it
# left the bed as it found it, which a test running beside it would break.
run build-tsan -DPSI_TSAN=ON -- -L unit -E '^(lint|docs_vs_code|prometheus_rules|pure_symbols.*)$'
one_bed=1 PSI_TEST_JOBS=1 run build-tsan -DPSI_TSAN=ON -- -R '^(kube_leader_election|operator_monitoring)$'
hack/fuzz.sh all 12
