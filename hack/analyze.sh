#!/usr/bin/env bash
# GCC's static analyzer (-fanalyzer) over what ships: api/, base/, kube/, httpd/, controller/
# and cli/ (PSI_BUILD_TESTS=OFF: neither the tests nor the simulator). Every finding must be
# triaged in hack/analyzer-triage.txt, one line per file, function and warning, with the
# reason it is not a bug; a finding not listed fails, and so does a listed one that no longer
# fires (the list says only what is true). A real bug is fixed, never listed.
#
#   hack/analyze.sh [DIR]     (default build-analyze; about 20 s of CPU on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-analyze}
rm -rf "$dir"
# Without CI in the environment: the analyzer's findings are checked against the list below,
# not turned into errors by CI's -Werror.
env -u CI cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPSI_BUILD_TESTS=OFF \
  -DCMAKE_C_FLAGS=-fanalyzer >/dev/null
if ! LC_ALL=C cmake --build "$dir" -j2 >"$dir/analyze.log" 2>&1; then
  tail -30 "$dir/analyze.log"
  exit 1
fi
python3 - "$dir/analyze.log" hack/analyzer-triage.txt "$dir" <<'EOF'
import re, sys, os
log, triage, build = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
root = os.getcwd() + "/"
found, where = set(), {}
func = {}
for line in open(log, errors="replace"):
    m = re.match(r"(\S+?): In function '([^']+)':", line)
    if m:
        func[m.group(1)] = m.group(2)
        continue
    m = re.match(r"(\S+?):(\d+):\d+: warning: .*\[(-Wanalyzer-[a-z-]+)\]$", line.rstrip())
    if m:
        path = m.group(1)
        # ccache (CMakeLists.txt) hands the compiler paths relative to the build directory
        key = (os.path.normpath(os.path.join(build, path)).removeprefix(root), func.get(path, "?"), m.group(3))
        found.add(key)
        where.setdefault(key, line.strip().removeprefix(root))
listed = {}
for n, line in enumerate(open(triage), 1):
    if not line.strip() or line.startswith("#"):
        continue
    parts = line.split(None, 3)
    if len(parts) < 4 or not parts[3].strip():
        sys.exit(f"{triage}:{n}: needs FILE FUNCTION WARNING REASON")
    listed[tuple(parts[:3])] = n
bad = 0
for key in sorted(found - listed.keys()):
    print(f"analyze: not triaged: {where[key]}")
    bad += 1
for key in sorted(listed.keys() - found):
    print(f"analyze: {triage}:{listed[key]}: {' '.join(key)} no longer fires: remove the line")
    bad += 1
print(f"analyze: {len(found)} findings, {len(found & listed.keys())} triaged, {bad} problems")
sys.exit(1 if bad else 0)
EOF
