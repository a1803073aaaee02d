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
# ansible-test bootstraps pip into its virtual environments with a get-pip.py it downloads from a host outside the
# reachable package registries; give it our stand-in (ensurepip + pip install) unless a real one is cached.
PIP_VERSION="$(python -c 'from ansible_test._internal.python_requirements import get_venv_packages as g
class P: version = "3.11"
print(g(P())["pip"])')"
CACHE="$HOME/.ansible/test/cache/get_pip_${PIP_VERSION//./_}.py"
if [ ! -s "$CACHE" ]; then
  mkdir -p "$(dirname "$CACHE")"
  cp "$ROOT/tests/sanity/get_pip_standin.py" "$CACHE"
fi
# --requirements installs the sanity tools (pylint, yamllint, voluptuous...) into the venv on first use.
exec ansible-test sanity --python 3.11 --local --requirements --color no "${@:2}"
