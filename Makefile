# The project's commands. `make test` installs everything it needs (virtualenv, packages, kubectl,
# control-plane binaries) and runs ruff, mypy and the whole pytest suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test test-unit test-e2e lint control-plane bench demo clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev,local]'
	@touch $(STAMP)

install: $(STAMP)

control-plane:
	@bash hack/build-control-plane.sh >/dev/null

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test-unit: install
	$(BIN)/pytest tests/unit

test-e2e: install control-plane
	$(BIN)/pytest tests/e2e

test: install control-plane lint
	$(BIN)/pytest tests

demo: install control-plane
	$(BIN)/python -m jobflow_controller.local.demo

bench: install control-plane
	@for b in bench/[!_]*.py; do echo "== $$b" >&2; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
