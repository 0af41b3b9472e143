#!/usr/bin/env bash
# e2e: the Prometheus pressure source against the test bed's Prometheus (see prom_e2e.c).
#   prom_e2e.sh <prom_e2e binary> <psi-pressure-exporter binary>
source "$(dirname "$0")/../lib/testlib.sh"
exec "$1" "$2" "$PSI_SOURCE_DIR/hack/cluster/ctl"
