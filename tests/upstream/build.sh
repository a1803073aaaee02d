#!/usr/bin/env bash
# Builds (once) the real kubernetes-sigs descheduler at the release pinned in go.mod, for the tests that compare
# plans with what it does (tests/integration/test_upstream_agreement*.py). Its Kubernetes libraries are those of
# tests/controlplane (go.mod's replace lines), so one Go build cache serves both.
#
# One package variable is set at link time: the CA bundle its Prometheus client reads, a pod's service-account
# ca.crt upstream (pkg/descheduler/client/client.go, K8sPodCAFilePath), is read from prometheus-ca.crt in the
# process's working directory, so that a test can run its Prometheus metrics provider outside a pod
# (tests/integration/upstream_descheduler.py writes that file). Nothing else reads that path.
#
# The binary is cached OUTSIDE the repository, under
#   ${DESCHEDULER_FLEET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/descheduler-fleet}/upstream/<key>
# (tests/go_tool_build.sh builds and caches it). Prints that directory on its last line of stdout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$here/../go_tool_build.sh" "$here" upstream descheduler sigs.k8s.io/descheduler/cmd/descheduler \
    "the upstream descheduler" "-X sigs.k8s.io/descheduler/pkg/descheduler/client.K8sPodCAFilePath=prometheus-ca.crt"
