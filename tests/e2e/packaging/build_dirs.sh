#!/usr/bin/env bash
# README's install steps, then the configure step of hack/demo.sh and hack/test.sh
# (hack/configure.sh), in a copy of the tree: the install's build directory is not the
# scripts' build/; and a build/ configured as an older README said (Unix Makefiles, tests
# off) is reused: its generator kept, the simulator and tests then built by it (psi-sim is a
# target). Configure only: nothing is compiled.
set -euo pipefail
src=${PSI_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 passes=0
pass() { echo "ok   - $*"; passes=$((passes + 1)); }
fail() { echo "FAIL - $*"; failures=$((failures + 1)); }
check() { local d=$1; shift; if "$@" >/dev/null; then pass "$d"; else fail "$d"; fi; }

git -C "$src" ls-files -z --cached --others --exclude-standard | (cd "$src" && xargs -0 cp --parents -t "$tmp" 2>/dev/null) || true
tree=$tmp
# The configure line of README's "Using it", as written.
line=$(grep -m1 -E '^cmake -S \. -B [^ ]+ .*-DPSI_BUILD_TESTS=OFF' "$src/README.md" | sed 's/ *#.*//')
check "README's install configures with tests off" test -n "$line"
dir=$(awk '{for (i = 1; i < NF; i++) if ($i == "-B") print $(i + 1)}' <<<"$line")
(cd "$tree" && eval "$line") >"$tmp/readme.log" 2>&1 || { cat "$tmp/readme.log"; exit 1; }
check "README's build directory ($dir) is not the scripts' build/" test "$dir" != build
"$tree/hack/configure.sh" "$tree/build" >"$tmp/fresh.log" 2>&1
check "the scripts' build/ is configured with Ninja" grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$tree/build/CMakeCache.txt"
check "and has the psi-sim target" bash -c "cmake --build '$tree/build' --target help | grep psi-sim"

# A build/ as the older README left it: the default generator (Unix Makefiles), tests off.
rm -rf "$tree/build"
cmake -S "$tree" -B "$tree/build" -DCMAKE_BUILD_TYPE=Release -DPSI_BUILD_TESTS=OFF >"$tmp/old.log" 2>&1
check "an old build/ has no psi-sim target" bash -c "! cmake --build '$tree/build' --target help | grep psi-sim"
check "hack/configure.sh reuses it" "$tree/hack/configure.sh" "$tree/build" -DCMAKE_BUILD_TYPE=Debug
check "keeping its generator" grep -qx 'CMAKE_GENERATOR:INTERNAL=Unix Makefiles' "$tree/build/CMakeCache.txt"
check "with the tests and the simulator on" bash -c "cmake --build '$tree/build' --target help | grep psi-sim"
echo "$passes passed, $failures failed"
((failures == 0))
