#!/usr/bin/env bash
# The project's test command: install dependencies, build, and run every test.
#  - the sanitizer build (build-asan/, AddressSanitizer + UndefinedBehaviorSanitizer): the
#    unit tests again and every end-to-end test against test beds of real upstream
#    components, so each e2e test runs once, and under the sanitizers. There are four test
#    beds (CMake's PSI_E2E_LANES), handed out by ctest's resource allocation (the build's
#    testbeds.json): each e2e test takes a free bed, the longest first, and PSI_TEST_JOBS
#    (default 4: ctest -j) tests run at once;
#  - beside the sanitizer build's tests, one after the other:
#    - the plain build (build/): the unit tests;
#    - the analyzer build (build-analyze/, GCC -fanalyzer over what ships): every finding
#      triaged in hack/analyzer-triage.txt (hack/analyze.sh);
#    - the plain build's valgrind leak check of a long watch session (valgrind cannot run a
#      sanitized binary), against a test bed of its own (build/testbed);
#    - the thread sanitizer build (build-tsan/, ThreadSanitizer): the unit tests;
#    - the fuzz build (build-fuzz/, clang, libFuzzer): each target of tests/fuzz for 12 s
#      (hack/fuzz.sh; a longer run of one target: hack/fuzz.sh TARGET SECONDS);
#    - the thread sanitizer build's leader-election and monitoring e2e tests, one after the
#      other against a test bed of their own.
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
  # (each step returns on failure: the caller may test run's status, where set -e is off)
  hack/configure.sh "$dir" -DCMAKE_BUILD_TYPE=Debug "${cmake_args[@]+"${cmake_args[@]}"}" || return
  cmake --build "$dir" -j2 || return
  # Test beds left over from an interrupted run are stopped and removed first.
  local bed
  for bed in "$dir"/testbed*/; do
    [ -d "$bed" ] && { hack/cluster/down --dir "$bed" --purge >/dev/null 2>&1 || true; }
  done
  local spec=(--resource-spec-file "$PWD/$dir/testbeds.json")
  [ "${one_bed:-0}" = 1 ] && spec=()
  ctest --test-dir "$dir" --output-on-failure -j "${PSI_TEST_JOBS:-4}" "${spec[@]+"${spec[@]}"}" "$@"
}

if (($#)); then
  run build -- "$@"
  run build-asan -DPSI_SANITIZE=ON -- "$@"
  exit
fi
# Beside the e2e phase, which mostly waits on its beds (a load of 0.7 to 2 on 2 cores), one
# after the other: the plain build's unit tests; the analyzer; the valgrind leak check (on
# build/testbed, a bed of its own); under ThreadSanitizer the C unit tests (the server tests
# drive the serving threads); the fuzz targets; then, on a bed of their own
# (build-tsan/testbed, brought up once the e2e beds are), the ThreadSanitizer e2e tests of the
# threads that share state with the event loop (leader election, the metrics and health
# endpoints), one at a time: each checks on exit that it left the bed as it found it, which a
# test running beside it would break. Their output follows the e2e phase's.
mkdir -p build
side_log=build/side-checks.log
(
  run build -- -L unit
  hack/analyze.sh
  one_bed=1 run build -- -R '^kube_informer_valgrind$'
  PSI_TEST_JOBS=1 run build-tsan -DPSI_TSAN=ON -- -L unit -E '^(lint|docs_vs_code|prometheus_rules|pure_symbols.*)$'
  hack/fuzz.sh all 12
  one_bed=1 PSI_TEST_JOBS=1 run build-tsan -DPSI_TSAN=ON -- -R '^(kube_leader_election|operator_monitoring)$'
) >"$side_log" 2>&1 &
side=$!
e2e_rc=0 side_rc=0
run build-asan -DPSI_SANITIZE=ON -- || e2e_rc=$?
wait "$side" || side_rc=$?
cat "$side_log"
((e2e_rc == 0)) || { echo "test: the ASan build's tests failed" >&2; exit "$e2e_rc"; }
((side_rc == 0)) || { echo "test: the plain unit tests, the analyzer, valgrind, ThreadSanitizer or fuzz checks failed (above)" >&2; exit "$side_rc"; }
