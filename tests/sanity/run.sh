#!/usr/bin/env bash
# ansible-test sanity needs the collection at .../ansible_collections/<namespace>/<name> as a real directory
# (it resolves symlinks) and outside any git checkout (there it would skip git-ignored paths such as build/),
# so we copy the files git knows about (tracked and untracked, not ignored) to a temporary collection root.
set -euo pipefail
BIN="${1:-.venv/bin}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
SANITY_ROOT="${TMPDIR:-/tmp}/descheduler-fleet-sanity"
DEST="$SANITY_ROOT/ansible_collections/descheduler/fleet"
rm -rf "$SANITY_ROOT"
mkdir -p "$DEST"
cd "$ROOT"
git ls-files --cached --others --exclude-standard -z | while IFS= read -r -d '' file; do
  [ -f "$file" ] || continue
  mkdir -p "$DEST/$(dirname "$file")"
  cp -p "$file" "$DEST/$file"
done
cd "$DEST"
PATH="$ROOT/$BIN:$PATH"
# ansible-test keeps its virtual environments under $HOME/.ansible/test. It gets a HOME of its own inside build/, so a
# fresh checkout always proves a cold start (nothing borrowed from the user's ~/.ansible), and a pip.conf there holding
# the pip settings in effect now: ansible-test scrubs the environment, so PIP_CERT, PIP_INDEX_URL... would be lost.
SANITY_HOME="$ROOT/build/sanity-home"
mkdir -p "$SANITY_HOME/.config/pip"
python "$ROOT/tests/sanity/pip_config.py" > "$SANITY_HOME/.config/pip/pip.conf"
# ansible-test bootstraps pip into its virtual environments with a get-pip.py it downloads from a host outside the
# reachable package registries; give it our stand-in (ensurepip + pip install).
PIP_VERSION="$(python -c 'from ansible_test._internal.python_requirements import get_venv_packages as g
class P: version = "3.11"
print(g(P())["pip"])')"
CACHE="$SANITY_HOME/.ansible/test/cache/get_pip_${PIP_VERSION//./_}.py"
mkdir -p "$(dirname "$CACHE")"
cp "$ROOT/tests/sanity/get_pip_standin.py" "$CACHE"
# --requirements installs the sanity tools (pylint, yamllint, voluptuous...) into the venvs on first use.
HOME="$SANITY_HOME" exec ansible-test sanity --python 3.11 --local --requirements --color no "${@:2}"
