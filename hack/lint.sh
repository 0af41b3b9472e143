#!/usr/bin/env bash
# The style checks the build does not make: formatting and function size.
#  - format: every tracked C file against .clang-format (clang-format --dry-run); the files
#    that differ are listed. `hack/lint.sh --fix` formats them in place instead.
#  - size: no function in controller/, kube/, api/, base/, cli/ or the simulator (hack/sim) over 100
#    lines or 7 parameters (hack/funcsize.py, which reads the project's layout).
# Exit status 1 when a check finds something.
#
#   hack/lint.sh            both checks
#   hack/lint.sh format     one of them (format, size)
#   hack/lint.sh --fix      format the tracked C files in place
set -euo pipefail
cd "$(dirname "$0")/.."

status=0

check_format() {
  command -v clang-format >/dev/null || { echo "lint: clang-format not found (hack/deps.sh installs it)" >&2; return 1; }
  local f bad=0
  while IFS= read -r f; do
    if ! clang-format --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then
      echo "format: $f differs from .clang-format (clang-format -i $f)"
      bad=1
    fi
  done < <(git ls-files '*.c' '*.h')
  return $bad
}

check_size() {
  local dirs=() d
  for d in controller kube api base cli hack/sim; do [ -d "$d" ] && dirs+=("$d"); done
  hack/funcsize.py --max-lines 100 --max-params 7 "${dirs[@]}" | sed 's/^/size: /'
  return "${PIPESTATUS[0]}"
}

case "${1:-all}" in
  --fix) git ls-files '*.c' '*.h' | xargs clang-format --style=file -i ;;
  format) check_format || status=1 ;;
  size) check_size || status=1 ;;
  all)
    check_format || status=1
    check_size || status=1
    ;;
  *) echo "usage: hack/lint.sh [format|size|--fix]" >&2; exit 2 ;;
esac
exit $status
