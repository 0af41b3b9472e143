#!/usr/bin/env bash
# Configure a build directory for hack/demo.sh and hack/test.sh, whatever was there before:
# a new directory gets Ninja; one that exists keeps the generator it was made with (CMake
# refuses to change it: "generator Ninja does not match ..."), so a build/ left by an older
# README's install steps (Unix Makefiles) still serves. The tests and the simulator are
# always turned on (PSI_BUILD_TESTS=ON), as a directory configured without them
# (-DPSI_BUILD_TESTS=OFF) has no psi-sim target.
#
#   hack/configure.sh DIR [CMAKE_ARGS...]     (run from anywhere; the source is this tree)
set -euo pipefail
dir=${1:?usage: hack/configure.sh DIR [CMAKE_ARGS...]}
shift
src=$(cd "$(dirname "$0")/.." && pwd)
gen=(-G Ninja)
if [ -f "$dir/CMakeCache.txt" ]; then
  gen=()
  g=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$dir/CMakeCache.txt")
  [ "$g" = Ninja ] || echo "configure: $dir was made with the generator '$g': keeping it" >&2
fi
cmake -S "$src" -B "$dir" "${gen[@]+"${gen[@]}"}" -DPSI_BUILD_TESTS=ON "$@" >/dev/null
