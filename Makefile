# Two entry points a newcomer needs:  make demo   and   make test
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The collection must be importable as ansible_collections.descheduler.fleet: we link the checkout there.
COLL_ROOT := build/collections
COLL_LINK := $(COLL_ROOT)/ansible_collections/descheduler/fleet
export ANSIBLE_COLLECTIONS_PATH := $(CURDIR)/$(COLL_ROOT)
export PYTHONPATH := $(CURDIR)/$(COLL_ROOT)

.PHONY: venv demo test lint unit integration sanity bench clean

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
	$(BIN)/ansible-playbook -i examples/inventory.yml playbooks/dry_run.yml -e descheduler_fail_on_cluster_error=true
	@echo "Reports: examples/out/<cluster>/plan.{json,md,html} and examples/out/fleet-summary.{md,html}"

test: lint unit integration sanity

lint: venv
	$(BIN)/ruff check .

unit: venv
	$(BIN)/pytest -q tests/unit

integration: venv
	$(BIN)/pytest -q tests/integration

sanity: venv
	bash tests/sanity/run.sh $(BIN)

bench: venv
	$(BIN)/python benchmarks/bench_engine.py

clean:
	rm -rf build $(VENV)
