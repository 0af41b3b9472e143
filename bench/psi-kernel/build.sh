#!/bin/sh
# Build bench/psi-kernel/psi-kernel (a benchmark: not part of the CMake build or the tests).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/psi-kernel}
${CC:-cc} -O2 -Wall -Wextra -std=gnu11 -o "$out" "$here/psi-kernel.c" -lm -pthread
echo "$out"
