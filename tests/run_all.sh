#!/usr/bin/env bash
# `make test`: every stage of the test suite, in order, stopping at the first that fails:
#   venv, lint, unit, integration, sanity, compat, package
# The Go builds the integration tests need (tests/controlplane/build.sh, then tests/upstream/build.sh: minutes on a
# cold machine, mostly module downloads and compiling) start first, in the background, while the venv, lint and
# unit stages run; the integration stage waits for them. Each stage's wall time is printed at the end, whether the
# run passed or not, and the Go build's own output is in build/go-build.log.
set -uo pipefail
cd "$(dirname "$0")/.."
MAKE="${MAKE:-make}"
mkdir -p build

summary=()
run_started=$(date +%s)

print_summary() {
    local line
    echo
    echo "== stage times (wall clock) =="
    for line in "${summary[@]}"; do
        echo "  $line"
    done
    printf '  %-22s %6ss\n' "total" "$(( $(date +%s) - run_started ))"
}
trap print_summary EXIT

# run_stage NAME COMMAND...: runs the command, records its time and outcome; a failure ends the run.
run_stage() {
    local name="$1" started status
    shift
    started=$(date +%s)
    echo "== $name =="
    "$@"
    status=$?
    local outcome="ok"
    [ "$status" -eq 0 ] || outcome="FAILED (exit $status)"
    summary+=("$(printf '%-22s %6ss  %s' "$name" "$(( $(date +%s) - started ))" "$outcome")")
    [ "$status" -eq 0 ] || exit "$status"
}

go_build_pid=""
go_build_started=$(date +%s)
if [ -z "${TEST_KUBECONFIG:-}" ]; then
    rm -f build/go-build.finished
    ( bash tests/controlplane/build.sh >/dev/null && bash tests/upstream/build.sh >/dev/null \
        && bash tests/s3server/build.sh >/dev/null && date +%s >build/go-build.finished ) >build/go-build.log 2>&1 &
    go_build_pid=$!
fi

# Chromium, for the browser check of the what-if fleet HTML (tests/integration/test_whatif_fleet_browser.py, which
# waits for build/chromium-install.status and is skipped, saying why, without Chromium): installed in the
# background when missing, as root with apt-get only; its output in build/chromium-install.log.
rm -f build/chromium-install.status
(
    started=$(date +%s)
    if command -v chromium >/dev/null; then
        status="ok: already installed"
    elif [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
        status="not installed: installing it needs root and apt-get (apt-get install chromium)"
    elif apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium
    then
        status="ok: installed in $(( $(date +%s) - started ))s"
    else
        status="failed: apt-get install chromium failed, see build/chromium-install.log"
    fi
    echo "$status"
    echo "$status" >build/chromium-install.status.tmp
    mv build/chromium-install.status.tmp build/chromium-install.status
) >build/chromium-install.log 2>&1 &
echo $! >build/chromium-install.pid

wait_for_go_build() {
    [ -n "$go_build_pid" ] || return 0
    if ! wait "$go_build_pid"; then
        echo "the Go builds failed; the end of build/go-build.log:" >&2
        tail -n 40 build/go-build.log >&2
        return 1
    fi
    summary+=("$(printf '%-22s %6ss  %s' "(go builds, background)" \
                "$(( $(cat build/go-build.finished) - go_build_started ))" "beside venv, lint and unit")")
}

run_stage venv "$MAKE" --no-print-directory venv
run_stage lint "$MAKE" --no-print-directory lint
run_stage unit "$MAKE" --no-print-directory unit
run_stage "wait for go builds" wait_for_go_build
run_stage integration "$MAKE" --no-print-directory integration
run_stage sanity "$MAKE" --no-print-directory sanity
run_stage compat "$MAKE" --no-print-directory compat
run_stage package "$MAKE" --no-print-directory package
