#!/usr/bin/env bash
# Install everything the build, the test bed and the tests need (idempotent).
# Debian packages through apt; the pinned upstream Kubernetes components, etcd and kwok
# are built from Go modules by hack/tools/build.sh, which the test bed calls.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libcurl4-openssl-dev libcjson-dev libyaml-dev libssl-dev libcmocka-dev
  prometheus
  openssl jq curl valgrind iproute2 procps
  python3-yaml
  clang libclang-rt-dev   # the libFuzzer targets of tests/fuzz (hack/fuzz.sh)
  clang-format
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian's prometheus package starts its own daemon where an init system runs; the test
  # bed starts its own instance on a free port, so stop that one.
  if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
    $sudo systemctl disable --now prometheus 2>/dev/null || true
  fi
fi

command -v go >/dev/null || { echo "deps: Go is required to build the pinned test components (hack/tools)" >&2; exit 1; }
echo "deps: ok"
