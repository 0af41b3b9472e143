#!/usr/bin/env bash
# Install everything the build, the test bed and the tests need (idempotent).
# Debian packages through apt; the pinned upstream Kubernetes components, etcd and kwok
# are built from Go modules by hack/tools/build.sh, which the test bed calls.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache
  libcurl4-openssl-dev libcjson-dev libyaml-dev libssl-dev libcmocka-dev
  prometheus
  openssl jq curl valgrind iproute2 procps
  python3-yaml
  clang libclang-rt-dev   # the libFuzzer targets of tests/fuzz (hack/fuzz.sh)
  clang-format
  libwebsockets-dev   # tests/unit/httpd/test_lws_bounds.c: what it does with hostile heads
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian's prometheus package starts its own daemon where an init system runs; the test
  # bed starts its own instance on a free port, so stop that one.
  if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
    $sudo systemctl disable --now prometheus 2>/dev/null || true
  fi
fi

# Go: hack/tools' modules need Go 1.26 (their go.mod). Debian 12's golang-go is 1.19, and no
# newer Debian Go is reachable. But the Go toolchain is itself a module,
# golang.org/toolchain@v0.0.1-go<version>.<os>-<arch> (what GOTOOLCHAIN fetches from Go 1.21 on),
# which any Go can `go mod download`: a Go already on the PATH, or else Debian's, unpacked into a
# temporary directory with `apt-get download` (not installed). The toolchain goes to
# $PSI_GO_PREFIX/go (default /usr/local/lib/psi-rebalancer-go/go), its go and gofmt linked into
# $PSI_GO_BIN (default /usr/local/bin, ahead of /usr/bin on Debian's PATH). A Go of 1.26 or
# newer already on the PATH is left alone, and so is /usr/local/go.
go_version=1.26.8
go_prefix=${PSI_GO_PREFIX:-/usr/local/lib/psi-rebalancer-go}
go_bin=${PSI_GO_BIN:-/usr/local/bin}

# go_recent GO: GO runs and is 1.26 or newer.
go_recent() {
  local v
  v=$("$1" env GOVERSION 2>/dev/null) || return 1
  v=${v#go}
  local major=${v%%.*} rest=${v#*.}
  local minor=${rest%%[!0-9]*}
  [ "${major:-0}" -gt 1 ] || { [ "${major:-0}" -eq 1 ] && [ "${minor:-0}" -ge 26 ]; }
}

install_go() ( # a subshell: its temporary directory goes with it
  local tmp boot arch deb dir
  tmp=$(mktemp -d)
  trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
  arch=$(dpkg --print-architecture)
  if boot=$(command -v go); then
    echo "deps: $("$boot" version 2>/dev/null || echo "$boot") is older than Go 1.26: fetching go$go_version with it"
  else
    deb=$(apt-cache depends golang-go 2>/dev/null | awk '/Depends: golang-[0-9.]+-go$/ {print $2; exit}')
    [ -n "$deb" ] || { $sudo apt-get update -qq && deb=$(apt-cache depends golang-go | awk '/Depends: golang-[0-9.]+-go$/ {print $2; exit}'); }
    [ -n "$deb" ] || { echo "deps: no Go on the PATH and no Debian golang-go to start from" >&2; exit 1; }
    echo "deps: no Go on the PATH: fetching go$go_version with Debian's $deb (unpacked in $tmp, not installed)"
    (cd "$tmp" && apt-get download -qq "$deb" 2>/dev/null) || { echo "deps: apt-get download $deb failed" >&2; exit 1; }
    dpkg-deb -x "$tmp"/"$deb"_*.deb "$tmp/root"
    boot=$(echo "$tmp"/root/usr/lib/go-*/bin/go)
  fi
  mkdir -p "$tmp/mod" "$tmp/gopath"
  dir=$(cd "$tmp/mod" && env GOPATH="$tmp/gopath" GOFLAGS= GOTOOLCHAIN=local GO111MODULE=on "$boot" mod init deps >/dev/null 2>&1 &&
    env GOPATH="$tmp/gopath" GOFLAGS= GOTOOLCHAIN=local GO111MODULE=on \
      "$boot" mod download -json "golang.org/toolchain@v0.0.1-go$go_version.linux-$arch" | jq -r .Dir) ||
    { echo "deps: go mod download golang.org/toolchain@v0.0.1-go$go_version.linux-$arch failed" >&2; exit 1; }
  $sudo rm -rf "$go_prefix/go.new"
  $sudo mkdir -p "$go_prefix" "$go_bin"
  $sudo cp -r "$dir" "$go_prefix/go.new"
  # A module zip keeps no file modes: make the commands executable, as the go command does
  # when it switches toolchains.
  $sudo chmod -R u+w,a+rX "$go_prefix/go.new"
  $sudo chmod a+x "$go_prefix"/go.new/bin/* "$go_prefix"/go.new/pkg/tool/*/*
  $sudo rm -rf "$go_prefix/go"
  $sudo mv "$go_prefix/go.new" "$go_prefix/go"
  $sudo ln -sf "$go_prefix/go/bin/go" "$go_prefix/go/bin/gofmt" "$go_bin/"
  go_recent "$go_bin/go" || { echo "deps: the installed $go_bin/go does not run as Go 1.26" >&2; exit 1; }
  echo "deps: installed $("$go_bin/go" version) in $go_prefix/go ($go_bin/go)"
)

if ! { command -v go >/dev/null && go_recent go; }; then
  if [ -x "$go_bin/go" ] && go_recent "$go_bin/go"; then
    echo "deps: $go_bin/go is Go $("$go_bin/go" env GOVERSION), but an older go comes first on the PATH" >&2
    exit 1
  fi
  install_go
  hash -r
  command -v go >/dev/null && go_recent go ||
    { echo "deps: Go $go_version is in $go_bin, which is not ahead on the PATH: add it" >&2; exit 1; }
fi
echo "deps: ok"
