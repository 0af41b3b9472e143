# shellcheck shell=bash
# Run the simulator (hack/sim) in e2e tests, and talk to the API server as its clients do.
# Source after testlib.sh. Each test gives the simulator a namespace of its own; the
# simulator deletes it when it stops (--cleanup).

sim_bin=${PSI_BINARY_DIR:?}/hack/sim/psi-sim
sim_work=$(mktemp -d)
sim_pid=
sim_record=$sim_work/record.jsonl

# sim_start SCENARIO NAMESPACE [ARGS...]: start it and wait until every VM runs.
sim_start() {
  local scenario=$1 ns=$2; shift 2
  sim_ns=$ns
  rm -f "$sim_work/ready.json"
  kubectl delete namespace "$ns" --ignore-not-found --wait=true --timeout=60s >/dev/null 2>&1 || true
  "$sim_bin" --scenario "$scenario" --namespace "$ns" --record "$sim_record" --ready-file "$sim_work/ready.json" \
    --cleanup --log-level debug "$@" >>"$sim_work/sim.log" 2>&1 &
  sim_pid=$!
  local deadline=$((SECONDS + 120))
  until [ -s "$sim_work/ready.json" ]; do
    if ! kill -0 "$sim_pid" 2>/dev/null || ((SECONDS >= deadline)); then
      fail "the simulator started and every VM ran (log: $sim_work/sim.log)"
      tail -40 "$sim_work/sim.log"
      return 1
    fi
    sleep 0.2
  done
  sim_metrics=http://127.0.0.1:$(jq -r .metricsPort "$sim_work/ready.json")
  pass "the simulator started $(jq -r .scenario "$sim_work/ready.json") in $ns and every VM runs"
}

sim_stop() {
  [ -n "$sim_pid" ] || return 0
  kill -TERM "$sim_pid" 2>/dev/null || true
  wait "$sim_pid" 2>/dev/null || true
  sim_pid=
}

# sim_cleanup: stop it; show its log when a check failed.
sim_cleanup() {
  sim_stop
  if ((failures)) && [ -f "$sim_work/sim.log" ]; then
    echo "---- simulator log (last 80 lines) ----"
    tail -80 "$sim_work/sim.log"
  fi
  rm -rf "$sim_work"
}

# evict NS POD [EXTRA [ANNOTATIONS]]: POST a policy/v1 Eviction (EXTRA: more members, e.g.
# ',"deleteOptions":{...}'; ANNOTATIONS: its metadata.annotations, a JSON object); prints
# "<http code> <message>".
evict() {
  local body
  body=$(curl -sS --max-time 30 --cacert "$PSI_TESTBED/pki/ca.crt" --cert "$PSI_TESTBED/pki/admin.crt" \
    --key "$PSI_TESTBED/pki/admin.key" -H 'Content-Type: application/json' -X POST \
    "$PSI_APISERVER_URL/api/v1/namespaces/$1/pods/$2/eviction" \
    -d "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"$2\",\"namespace\":\"$1\"${4:+,\"annotations\":$4}}${3:-}}" \
    -w '\n%{http_code}')
  printf '%s %s\n' "$(tail -1 <<<"$body")" "$(head -n -1 <<<"$body" | jq -r '.message // ""')"
}

# create_vmim NS NAME VMI: POST a VirtualMachineInstanceMigration; prints "<http code> <message>".
create_vmim() {
  local body
  body=$(curl -sS --max-time 30 --cacert "$PSI_TESTBED/pki/ca.crt" --cert "$PSI_TESTBED/pki/admin.crt" \
    --key "$PSI_TESTBED/pki/admin.key" -H 'Content-Type: application/json' -X POST \
    "$PSI_APISERVER_URL/apis/kubevirt.io/v1/namespaces/$1/virtualmachineinstancemigrations" \
    -d "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachineInstanceMigration\",\"metadata\":{\"name\":\"$2\"},\"spec\":{\"vmiName\":\"$3\"}}" \
    -w '\n%{http_code}')
  printf '%s %s\n' "$(tail -1 <<<"$body")" "$(head -n -1 <<<"$body" | jq -r '.message // ""')"
}

# vmi_field NAME JSONPATH: a field of a VMI of the simulator's namespace.
vmi_field() { kubectl get vmi "$1" -n "$sim_ns" -o jsonpath="{$2}" 2>/dev/null; }

# launcher VM: the name of the VM's launcher pod on its VMI's node.
launcher() {
  local node
  node=$(vmi_field "$1" .status.nodeName)
  kubectl get pods -n "$sim_ns" -l "vm.kubevirt.io/name=$1" -o json |
    jq -r --arg n "$node" '[.items[] | select(.spec.nodeName == $n and .metadata.deletionTimestamp == null)][0].metadata.name // ""'
}

# prom QUERY: the instant query's result vector (JSON) from the test bed's Prometheus.
prom() { curl -sS --max-time 10 "$PSI_PROMETHEUS_URL/api/v1/query" --data-urlencode "query=$1" | jq -c '.data.result'; }
