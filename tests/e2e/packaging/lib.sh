# shellcheck shell=bash
# Helpers for the packaging checks that need no test bed (label "package"): the same output
# and closing line as tests/e2e/lib/testlib.sh, and the pinned OLM tools.
set -euo pipefail
src=${PSI_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
failures=0
passes=0
pass() { echo "ok   - $*"; passes=$((passes + 1)); }
fail() { echo "FAIL - $*"; failures=$((failures + 1)); }
check() { local d=$1; shift; if "$@"; then pass "$d"; else fail "$d"; fi; }
# refused DESCRIPTION CMD...: pass when CMD fails (a check that must be able to say no).
refused() { local d=$1; shift; if "$@" >/dev/null 2>&1; then fail "$d (it was accepted)"; else pass "$d"; fi; }
finish() { echo "$passes passed, $failures failed"; ((failures == 0)); }
eval "$("$src/hack/tools/olm/build.sh")"
opm=$PSI_OLM_BIN/opm
bundle_validate=$PSI_OLM_BIN/bundle-validate
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# yaml2json FILE: the first YAML document of FILE as JSON on stdout.
yaml2json() { python3 -c 'import json, sys, yaml; json.dump(next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d), sys.stdout)' "$1"; }
