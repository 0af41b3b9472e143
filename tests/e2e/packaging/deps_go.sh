#!/usr/bin/env bash
# hack/deps.sh on a machine without Go, as on a fresh Debian 12 (whose golang-go is 1.19, too
# old for hack/tools' modules): with every directory holding a `go` taken off the PATH, and
# its Go prefix and link directory in a temporary directory (the machine's Go is not touched),
# deps.sh fetches Go 1.26 as the module golang.org/toolchain with Debian's Go 1.19, unpacked
# from its package (apt-get download, not installed), and links a working go where it said.
# With a recent Go on the PATH, deps.sh leaves it alone and installs nothing.
set -euo pipefail
src=${PSI_SOURCE_DIR:?}
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
failures=0 passes=0
pass() { echo "ok   - $*"; passes=$((passes + 1)); }
fail() { echo "FAIL - $*"; failures=$((failures + 1)); }
check() { local d=$1; shift; if "$@" >/dev/null; then pass "$d"; else fail "$d"; fi; }

stripped=
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do [ -e "$d/go" ] || stripped=${stripped:+$stripped:}$d; done
check "no go is left on the stripped PATH" bash -c "PATH='$stripped'; ! command -v go"

rc=0
out=$(PATH="$work/bin:$stripped" PSI_GO_PREFIX="$work/prefix" PSI_GO_BIN="$work/bin" "$src/hack/deps.sh" 2>&1) || rc=$?
echo "$out"
check "deps.sh succeeds without a Go on the PATH" test "$rc" -eq 0
check "it says it started from Debian's Go" grep -q "with Debian's golang-1.[0-9]*-go" <<<"$out"
check "the go it links is Go 1.26.8" test "$("$work/bin/go" env GOVERSION 2>/dev/null)" = go1.26.8
check "its GOROOT is the prefix it was given" test "$("$work/bin/go" env GOROOT 2>/dev/null)" = "$work/prefix/go"
mkdir -p "$work/hello"
printf 'module hello\n\ngo 1.26\n' > "$work/hello/go.mod"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("built by", "go") }\n' > "$work/hello/main.go"
check "it builds and runs a program" bash -c \
  "cd '$work/hello' && PATH='$work/bin:$stripped' GOCACHE='$work/cache' GOPATH='$work/gopath' go run . | grep -qx 'built by go'"
check "a second run finds it and installs nothing" bash -c \
  "o=\$(PATH='$work/bin:$stripped' PSI_GO_PREFIX='$work/prefix' PSI_GO_BIN='$work/bin' '$src/hack/deps.sh' 2>&1) && ! grep -q 'deps: installed' <<<\"\$o\""
check "with the machine's Go (1.26 or newer) on the PATH it installs nothing" bash -c \
  "PSI_GO_PREFIX='$work/prefix2' PSI_GO_BIN='$work/bin2' '$src/hack/deps.sh' && [ ! -e '$work/bin2/go' ] && [ ! -e '$work/prefix2' ]"
echo "$passes passed, $failures failed"
((failures == 0))
