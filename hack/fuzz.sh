#!/usr/bin/env bash
# Build and run the libFuzzer targets of tests/fuzz (clang, ASan, UBSan) in build-fuzz/.
#
#   hack/fuzz.sh TARGET [SECONDS]   one target (fuzz_prom, ...), SECONDS long (default 300)
#   hack/fuzz.sh all [SECONDS]      every target in turn, SECONDS each (the test command: 12)
#   hack/fuzz.sh list               the targets
#
# Each target starts from a seed corpus of files from tests/testdata and keeps what it
# finds in build-fuzz/corpus/TARGET (so a longer run goes on from a shorter one). A crash,
# a leak, undefined behaviour or a timeout (over 10 s for one input) fails the run and
# leaves the input that caused it in build-fuzz/crashes/TARGET/; replay it with
#   build-fuzz/tests/fuzz/TARGET build-fuzz/crashes/TARGET/<file>
set -euo pipefail
cd "$(dirname "$0")/.."

# target: seed files (globs under tests/testdata)
declare -A seeds=(
  [fuzz_spec]="api/*.json reconcile/*.json"
  [fuzz_status]="api/*.json reconcile/*.json"
  [fuzz_kubeconfig]="kube/*.yaml sim/*.yaml"
  [fuzz_watch]="reconcile/*.json psi/prom_error.json kube/watch-*.json"
  [fuzz_prom]="psi/prom_*.json"
  [fuzz_kubelet]="psi/summary_*.json"
  [fuzz_procfs]="psi/pressure_*.txt"
  [fuzz_scalars]="api/*.json"
  [fuzz_names]="api/*.json"
  [fuzz_http]="serve/head_*.txt"
)
targets=(fuzz_spec fuzz_status fuzz_kubeconfig fuzz_watch fuzz_prom fuzz_kubelet fuzz_procfs fuzz_scalars fuzz_names fuzz_http)

what=${1:-}
seconds=${2:-300}
case "$what" in
  list) printf '%s\n' "${targets[@]}"; exit 0 ;;
  all) run=("${targets[@]}") ;;
  fuzz_*) [ -n "${seeds[$what]:-}" ] || { echo "fuzz: no target $what (hack/fuzz.sh list)" >&2; exit 2; }; run=("$what") ;;
  *) echo "usage: hack/fuzz.sh TARGET|all|list [SECONDS]" >&2; exit 2 ;;
esac
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz: SECONDS must be a whole number" >&2; exit 2; }
command -v clang >/dev/null || { echo "fuzz: clang is required (hack/deps.sh installs it)" >&2; exit 1; }

dir=build-fuzz
CC=clang cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPSI_FUZZ=ON -DPSI_BUILD_TESTS=OFF >/dev/null
cmake --build "$dir" -j2 --target fuzz

status=0
for t in "${run[@]}"; do
  corpus=$dir/corpus/$t crashes=$dir/crashes/$t
  mkdir -p "$corpus" "$crashes"
  for g in ${seeds[$t]}; do
    for f in tests/testdata/$g; do
      if [ -f "$f" ] && [ ! -e "$corpus/${f##*/}" ]; then cp "$f" "$corpus/"; fi
    done
  done
  dict=()
  case $t in fuzz_procfs|fuzz_scalars|fuzz_kubeconfig) ;; *) dict=(-dict=tests/fuzz/json.dict) ;; esac
  echo "fuzz: $t for ${seconds}s"
  # -close_fd_mask=3: the targets' own messages are not the fuzzer's report
  if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      "$dir/tests/fuzz/$t" "${dict[@]+"${dict[@]}"}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -close_fd_mask=3 -artifact_prefix="$crashes/" "$corpus" </dev/null >"$dir/$t.log" 2>&1; then
    echo "fuzz: $t FAILED (input in $crashes/):"
    tail -40 "$dir/$t.log"
    status=1
  fi
  grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$dir/$t.log" | sed "s/^/fuzz: $t /"
done
exit $status
