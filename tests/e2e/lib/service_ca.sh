# shellcheck shell=bash
# A stand-in for OpenShift's service CA (service-ca-operator) on the test bed, the bed's CA
# ($PSI_TESTBED/pki) signing:
#   - a Service annotated service.beta.openshift.io/serving-cert-secret-name gets that Secret
#     (type kubernetes.io/tls) with a certificate for <service>.<namespace>.svc and
#     <service>.<namespace>.svc.cluster.local, and nothing else;
#   - a ConfigMap annotated service.beta.openshift.io/inject-cabundle gets the CA as
#     service-ca.crt.
# What the operator does on its own runs once, when a test calls it.
# Needs $work (the test's directory) and kubectl on the bed.

# service_ca_cert NAMESPACE SERVICE: issue a serving certificate for SERVICE in NAMESPACE as the
# service CA does; prints the directory that holds tls.crt and tls.key.
service_ca_cert() {
  local d=$work/service-ca/$1-$2
  mkdir -p "$d"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$d/tls.key" -out "$d/csr" \
    -subj "/CN=$2.$1.svc" 2>/dev/null
  openssl x509 -req -in "$d/csr" -CA "$PSI_TESTBED/pki/ca.crt" -CAkey "$PSI_TESTBED/pki/ca.key" -CAcreateserial \
    -CAserial "$d/ca.srl" -out "$d/tls.crt" -days 1 \
    -extfile <(printf 'subjectAltName=DNS:%s.%s.svc,DNS:%s.%s.svc.cluster.local\nextendedKeyUsage=serverAuth\n' "$2" "$1" "$2" "$1") 2>/dev/null
  echo "$d"
}

# service_ca_serving_secret NAMESPACE SERVICE: the Secret the Service's annotation names, with a
# certificate for it; prints the Secret's name.
service_ca_serving_secret() {
  local secret d
  secret=$(kubectl get service "$2" -n "$1" -o jsonpath='{.metadata.annotations.service\.beta\.openshift\.io/serving-cert-secret-name}')
  [ -n "$secret" ] || { echo "service CA: service $1/$2 has no serving-cert-secret-name annotation" >&2; return 1; }
  d=$(service_ca_cert "$1" "$2")
  kubectl create secret tls "$secret" -n "$1" --cert "$d/tls.crt" --key "$d/tls.key" --dry-run=client -o yaml |
    kubectl apply -f - >/dev/null
  echo "$secret"
}

# service_ca_bundle NAMESPACE CONFIGMAP: the ConfigMap, annotated for injection, holding the CA.
service_ca_bundle() {
  kubectl create configmap "$2" -n "$1" --from-file=service-ca.crt="$PSI_TESTBED/pki/ca.crt" --dry-run=client -o yaml |
    kubectl annotate -f - --local -o yaml service.beta.openshift.io/inject-cabundle=true | kubectl apply -f - >/dev/null
}
