# Two entry points a newcomer needs:  make demo   and   make test
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The collection must be importable as ansible_collections.descheduler.fleet: we link the checkout there.
COLL_ROOT := build/collections
COLL_LINK := $(COLL_ROOT)/ansible_collections/descheduler/fleet
export ANSIBLE_COLLECTIONS_PATH := $(CURDIR)/$(COLL_ROOT)
export PYTHONPATH := $(CURDIR)/$(COLL_ROOT)

.PHONY: venv demo test lint unit integration controlplane sanity compat compat-venv bench clean
# The oldest supported ansible-core (requirements-dev.txt allows 2.18 and 2.19; the main venv gets 2.19).
COMPAT_VENV := $(VENV)-ansible-2.18

$(BIN)/.installed: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements-dev.txt
	touch $@

$(COLL_LINK):
	mkdir -p $(dir $(COLL_LINK))
	ln -sfn $(CURDIR) $(COLL_LINK)

venv: $(BIN)/.installed $(COLL_LINK)

demo: venv
	$(BIN)/python examples/generate_cluster.py --flavor openshift --nodes 300 --pods-per-node 20 --seed 7 --out examples/snapshots/large.json.gz
	$(BIN)/ansible-playbook -i examples/inventory.yml playbooks/dry_run.yml -e dry_run_fail_on_cluster_error=true
	$(BIN)/ansible-playbook -i examples/inventory.yml playbooks/whatif.yml -e @examples/whatif-candidates.yml
	@echo "Reports: examples/out/<cluster>/plan.{json,md,html} and examples/out/fleet-summary.{md,html}"
	@echo "What-if: examples/out/whatif/<cluster>/whatif.{json,md,html} and examples/out/whatif/whatif-fleet.{json,md,html}"
	@echo "Open in a browser: file://$(CURDIR)/examples/out/whatif/whatif-fleet.html (the candidates side by side per cluster)"

# Every stage in order (venv, lint, unit, integration, sanity, compat, package), the cold Go builds started in the
# background first; prints each stage's time at the end (tests/run_all.sh).
test:
	bash tests/run_all.sh

# awx.awx, for the syntax check and lint of examples/awx/configure.yml: Galaxy is not reachable from CI, the `ansible`
# package on PyPI carries the collection. Only awx.awx is unpacked (next to our collection link); nothing is installed.
AWX_COLL := $(COLL_ROOT)/ansible_collections/awx/awx
AWX_FROM_PYPI := ansible==12.3.0
$(AWX_COLL): | $(BIN)/.installed
	rm -rf build/awx-download $(AWX_COLL)
	$(BIN)/pip download -q --no-deps --dest build/awx-download '$(AWX_FROM_PYPI)'
	$(BIN)/python -c "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); \
	  [z.extract(n, sys.argv[2]) for n in z.namelist() if n.startswith('ansible_collections/awx/awx/')]" \
	  build/awx-download/ansible-*.whl $(COLL_ROOT)
	rm -rf build/awx-download

lint: venv $(AWX_COLL)
	$(BIN)/ruff check .
	$(BIN)/ansible-lint  # production profile, see .ansible-lint
	$(BIN)/ansible-playbook --syntax-check examples/awx/configure.yml -e @examples/awx/fleet.yml
	$(BIN)/antsibull-changelog lint
	$(BIN)/antsibull-changelog lint-changelog-yaml changelogs/changelog.yaml
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/antsibull-docs lint-collection-docs --plugin-docs .

# UNIT_WORKERS pytest-xdist workers (the unit tests share nothing; two halve the stage on two cores)
UNIT_WORKERS ?= 2
unit: venv
	$(BIN)/pytest -q -n $(UNIT_WORKERS) tests/unit

# The integration tests run on a real kube-apiserver + kube-controller-manager + etcd built from Go sources
# (tests/controlplane/build.sh: cached per machine, see README.md "Tests"; TEST_KUBECONFIG skips it), and
# the upstream descheduler the plans are compared with (tests/upstream/build.sh, same libraries and cache).
# INTEGRATION_WORKERS pytest-xdist workers, each with a control plane of its own (see README.md "Tests").
INTEGRATION_WORKERS ?= 4
integration: venv controlplane
	$(BIN)/pytest -q -n $(INTEGRATION_WORKERS) --dist loadgroup tests/integration

# The upstream descheduler and the S3 server are built by the tests that use them (tests/upstream/build.sh,
# tests/s3server/build.sh; cached like the control plane), so `make test` starts integration before they are built.
controlplane:
	@if [ -z "$${TEST_KUBECONFIG:-}" ]; then bash tests/controlplane/build.sh; fi

sanity: venv
	bash tests/sanity/run.sh $(BIN)

$(COMPAT_VENV)/bin/.installed: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(COMPAT_VENV)
	$(COMPAT_VENV)/bin/pip install -q --upgrade pip
	$(COMPAT_VENV)/bin/pip install -q -r requirements-dev.txt 'ansible-core<2.19'
	touch $@

compat-venv: $(COMPAT_VENV)/bin/.installed $(COLL_LINK)

# The modules and roles through ansible-core 2.18's ansible-playbook, on COMPAT_WORKERS pytest-xdist workers.
COMPAT_WORKERS ?= $(INTEGRATION_WORKERS)
compat: compat-venv controlplane
	$(COMPAT_VENV)/bin/pytest -q -n $(COMPAT_WORKERS) --dist loadgroup tests/integration/test_plan_module.py \
	  tests/integration/test_evict_module.py

bench: venv
	$(BIN)/python benchmarks/bench_engine.py

clean:
	rm -rf build $(VENV) $(COMPAT_VENV)
# CHANGELOG.md from changelogs/changelog.yaml. A release: add fragments under changelogs/fragments/ as you go, then
# `antsibull-changelog release --version X.Y.Z` and set galaxy.yml's version to X.Y.Z (X.Y.Z-devN in between).
.PHONY: changelog
changelog: venv
	$(BIN)/antsibull-changelog lint
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/antsibull-changelog generate

# The collection as users get it. tarball: what ansible-galaxy builds (galaxy.yml's build_ignore decides the content;
# tests/integration/test_installed_collection.py installs one into an empty collections path and runs the demo).
# ee: the execution environment's build context (build/ee/Containerfile); building the image needs podman/docker.
.PHONY: tarball ee package
tarball: venv
	rm -rf build/dist
	$(BIN)/ansible-galaxy collection build --output-path build/dist .
	cd build/dist && ln -s descheduler-fleet-*.tar.gz descheduler-fleet.tar.gz

ee: tarball
	rm -rf build/ee
	$(BIN)/ansible-builder create --file execution-environment.yml --context build/ee --output-filename Containerfile

# docs: docs/modules/<name>.md, a page per module and role from ansible-doc (what `ansible-doc` shows, in Markdown).
.PHONY: docs
docs: venv
	$(BIN)/python docs/modules/generate.py

package: ee docs
