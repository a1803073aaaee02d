#!/usr/bin/env bash
# `make test`: every stage of the test suite, stopping at the first that fails:
#   venv, then lint, unit and compat venv with sanity beside them, integration with compat beside it, package
# The Go builds the integration tests need (tests/controlplane/build.sh, then tests/upstream/build.sh and
# tests/s3server/build.sh: minutes on a cold machine, module downloads and compiling) start first, in the background,
# while the stages that need no control plane run; the integration stage waits for the control plane only.
# Sanity (ansible-test: one test after another, each in a virtual environment it creates first) is the longest of
# those stages, so it runs beside lint, unit and compat venv (none of them writes where sanity copies the collection from: only build/ and
# caches, which git ignores). The integration tests mostly wait on servers, so compat (the module tests through
# ansible-core 2.18, on a control plane of its own) runs beside them. A stage run beside others has its output in
# build/<stage>.log, shown when it ends. Each stage's wall time is printed at the end, whether the run passed or not,
# and the Go build's own output is in build/go-build.log.
set -uo pipefail
cd "$(dirname "$0")/.."
MAKE="${MAKE:-make}"
mkdir -p build

summary=()
run_started=$(date +%s)
declare -A beside_pid beside_started

print_summary() {
    local line name
    for name in "${!beside_pid[@]}"; do  # a stage that failed while one ran beside it: stop that one too
        kill -0 "${beside_pid[$name]}" 2>/dev/null && kill -TERM -- "-${beside_pid[$name]}" 2>/dev/null
    done
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

# The Go builds, one after another (they share most packages, so the second compiles little): the control plane,
# which every integration test needs, then the upstream descheduler and the S3 server, which only some tests use.
# Integration starts once the control plane is built; a test that needs a tool still being built waits for it in
# that tool's build.sh (one build per cache key at a time: the others wait on its lock, then find the binary).
go_build_pid=""
go_build_started=$(date +%s)
if [ -z "${TEST_KUBECONFIG:-}" ]; then
    rm -f build/controlplane-build.finished build/go-build.finished
    setsid --wait bash -c 'bash tests/controlplane/build.sh >/dev/null \
        && date +%s >build/controlplane-build.finished \
        && bash tests/upstream/build.sh >/dev/null && bash tests/s3server/build.sh >/dev/null \
        && date +%s >build/go-build.finished' >build/go-build.log 2>&1 &
    go_build_pid=$!
    beside_pid[go-build]=$go_build_pid  # stopped with the other background stages when a stage fails
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

go_build_failed() {
    echo "the Go builds failed; the end of build/go-build.log:" >&2
    tail -n 40 build/go-build.log >&2
    return 1
}
# wait_for_control_plane: until the control plane is built (a check every 2 s of its marker and of the build process).
wait_for_control_plane() {
    [ -n "$go_build_pid" ] || return 0
    while [ ! -e build/controlplane-build.finished ] && kill -0 "$go_build_pid" 2>/dev/null; do
        sleep 2
    done
    [ -e build/controlplane-build.finished ] || go_build_failed
}
# finish_go_build: waits for the rest of the Go builds (by now the tests that needed them have waited for them).
finish_go_build() {
    [ -n "$go_build_pid" ] || return 0
    wait "$go_build_pid" || go_build_failed || return 1
    unset "beside_pid[go-build]"
    local control_plane=$(( $(cat build/controlplane-build.finished) - go_build_started ))
    summary+=("$(printf '%-22s %6ss  %s' "(go builds, background)" \
                "$(( $(cat build/go-build.finished) - go_build_started ))" \
                "the control plane in ${control_plane}s, then the upstream descheduler and S3 server")")
}

# start_beside NAME COMMAND...: runs the command in the background, its output in build/NAME.log;
# finish_beside NAME WHAT: waits for it, shows its output and records it as a stage (a failure ends the run).
start_beside() {
    local name="$1"
    shift
    echo "== $name (in the background, output in build/$name.log) =="
    beside_started[$name]=$(date +%s)
    setsid --wait "$@" >"build/$name.log" 2>&1 &  # a process group of its own, so a failure elsewhere can stop it whole
    beside_pid[$name]=$!
}
finish_beside() {
    local name="$1" beside="$2"
    wait "${beside_pid[$name]}"
    local status=$?
    unset "beside_pid[$name]"
    echo "== $name (ran in the background) =="
    cat "build/$name.log"
    local outcome="ok (beside $beside)"
    [ "$status" -eq 0 ] || outcome="FAILED (exit $status)"
    summary+=("$(printf '%-22s %6ss  %s' "$name" "$(( $(date +%s) - ${beside_started[$name]} ))" "$outcome")")
    [ "$status" -eq 0 ] || exit "$status"
}

run_stage venv "$MAKE" --no-print-directory venv
start_beside sanity "$MAKE" --no-print-directory sanity
run_stage lint "$MAKE" --no-print-directory lint
run_stage unit "$MAKE" --no-print-directory unit
run_stage "compat venv" "$MAKE" --no-print-directory compat-venv
finish_beside sanity "lint, unit and compat venv"
run_stage "wait for control plane" wait_for_control_plane
# compat gets one pytest worker and the port block after integration's workers' (TEST_PORT_BLOCK_OFFSET; the
# Makefile's default is 4 workers)
start_beside compat env TEST_PORT_BLOCK_OFFSET="${INTEGRATION_WORKERS:-4}" "$MAKE" --no-print-directory compat \
    COMPAT_WORKERS=1
run_stage integration "$MAKE" --no-print-directory integration
finish_beside compat integration
run_stage "go builds finished" finish_go_build
run_stage package "$MAKE" --no-print-directory package
