# shellcheck shell=bash
# Helpers for the shell e2e tests: assertions that name what failed, and polling.
# The test bed is given by the ctest fixture through KUBECONFIG and PSI_TESTBED.
set -euo pipefail
[ -n "${PSI_TESTBED:-}" ] || { echo "PSI_TESTBED is not set: run through ctest or set it to a test bed dir" >&2; exit 2; }
eval "$("$(dirname "${BASH_SOURCE[0]}")/../../../hack/cluster/env" --dir "$PSI_TESTBED")"

failures=0
passes=0
pass() { echo "ok   - $*"; passes=$((passes + 1)); }
fail() { echo "FAIL - $*"; failures=$((failures + 1)); }
# check DESCRIPTION CMD...: pass when CMD succeeds.
check() { local d=$1; shift; if "$@" >/dev/null; then pass "$d"; else fail "$d"; fi; }
# eventually SECONDS DESCRIPTION CMD...: pass when CMD succeeds within SECONDS.
eventually() {
  local secs=$1 d=$2; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then fail "$d (not within ${secs}s)"; return 0; fi
    sleep 0.5
  done
  pass "$d"
}
# free_port: a loopback port free now (bound, then closed).
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# finish: print the closing line and exit non-zero on any failure.
finish() {
  echo "$passes passed, $failures failed"
  ((failures == 0))
}
