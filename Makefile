# The project's commands. `make test` installs everything it needs (virtualenv, packages, kubectl,
# control-plane binaries, helm) and runs ruff, mypy, import-linter and the whole pytest suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Two pytest processes, each taking whole files (a module's fixtures stay in one process); every
# process starts its own control plane. Files go out longest first (tests/file_order.py, from the
# times in tests/file_durations.json; xdist's own reorder, most tests first, is turned off), so no
# long e2e file starts last. PYTEST_PARALLEL= runs everything in one process. The 25 slowest tests
# are listed at the end (issue 47 item 5: the suite is kept under its budget by them;
# docs/performance.md, "The test suite's time").
PYTEST_PARALLEL ?= -n 2 --dist loadfile --no-loadscope-reorder --durations=25

.PHONY: install runtime-venv test test-unit test-e2e test-client-latest lint dead-code control-plane helm chart browser bench demo clean sdk-models

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev,local]'
	@touch $(STAMP)

install: $(STAMP)

# The runtime set only, as the image installs it (the project, editable, no extras): the benchmarks
# run the controller from here, so what it imports and its RSS are the image's.
RUNTIME_VENV := .venv-runtime
$(RUNTIME_VENV)/.installed: pyproject.toml
	@test -x $(RUNTIME_VENV)/bin/python || $(PYTHON) -m venv $(RUNTIME_VENV)
	$(RUNTIME_VENV)/bin/python -m pip install --quiet -e .
	@touch $@

runtime-venv: $(RUNTIME_VENV)/.installed

control-plane:
	@bash hack/build-control-plane.sh >/dev/null

# helm 4 for the chart's tests: one on PATH (or $$HELM) of major version 4, else v4.3.2 built from its
# Go module into ~/.cache/jobflow-controller/helm/v4.3.2 (hack/build-helm.sh).
helm:
	@bash hack/build-helm.sh >/dev/null

# The chart as dist/jobflow-controller-<version>.tgz, after checking its copies of manifests/ are
# current (hack/gen_chart.py). Publishing it to an OCI registry: docs/helm.md.
chart: install helm
	$(BIN)/python hack/gen_chart.py --check
	@mkdir -p dist
	"$$(bash hack/build-helm.sh)" package charts/jobflow-controller --destination dist

# The UI's browser tests (tests/e2e/test_e2e_ui*.py) drive Debian's Chromium and chromedriver:
# installed here when missing and we are root with apt-get, as on CI. It never fails the build:
# without Chromium those tests are skipped, each saying why.
browser:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing Debian's chromium and chromium-driver for the UI's browser tests" >&2; \
			(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null) \
				|| echo "could not install chromium: the UI's browser tests will be skipped" >&2; \
		else \
			echo "no chromium and no way to install it (not root, or no apt-get): the UI's browser tests will be skipped" >&2; \
		fi; \
	fi

# The SDK's typed models (jobflow_sdk/models/_*.py) from manifests/crds/, after a CRD change
# (tests/unit/sdk/test_sdk_models_drift.py fails until this is run).
sdk-models: install
	$(BIN)/python hack/gen_sdk_models.py

lint: install dead-code
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# Unused functions, classes and attributes (vulture, with the reviewed allowlist in hack/unused_code.py).
dead-code: install
	$(BIN)/python hack/unused_code.py

# tests/unit/kube against the newest `kubernetes` release on PyPI (not the pinned one), so a stand-in of
# kube/client_library.py that an upgrade breaks fails a test (docs/decisions/0003-client-library-stand-ins.md).
# A throwaway virtualenv layered on .venv (its packages read through a .pth file): only the client and
# whatever new dependency it brings are installed into it. About 35 s on a loaded machine; `make test` runs it.
CLIENT_LATEST_VENV := .venv-client-latest
# Another release to try instead: make test-client-latest CLIENT_LATEST=kubernetes==36.0.3
CLIENT_LATEST ?= kubernetes
test-client-latest: install
	rm -rf $(CLIENT_LATEST_VENV)
	$(PYTHON) -m venv $(CLIENT_LATEST_VENV)
	$(BIN)/python -c 'import sysconfig; print("import site; site.addsitedir(%r)" % sysconfig.get_paths()["purelib"])' \
		> "$$($(CLIENT_LATEST_VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/layered-on-venv.pth"
	$(CLIENT_LATEST_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --upgrade "$(CLIENT_LATEST)"
	@$(CLIENT_LATEST_VENV)/bin/python -c 'import importlib.metadata as m; print("kubernetes", m.version("kubernetes"), "(CLIENT_LATEST=$(CLIENT_LATEST))")'
	$(CLIENT_LATEST_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/unit/kube
	rm -rf $(CLIENT_LATEST_VENV)

test-unit: install helm
	$(BIN)/pytest tests/unit

test-e2e: install control-plane helm browser
	$(BIN)/pytest $(PYTEST_PARALLEL) tests/e2e

test: install control-plane helm browser lint test-client-latest
	$(BIN)/pytest $(PYTEST_PARALLEL) tests

demo: install control-plane
	$(BIN)/python -m jobflow_controller.local.demo

# Every benchmark runs, even after one fails; each one's JSON document is printed and kept in
# $(BENCH_OUT), then bench/summary.py prints the one-screen table. Fails if any benchmark did.
BENCH_OUT ?= .bench-results
BENCHES := $(filter-out summary,$(patsubst bench/%.py,%,$(wildcard bench/[!_]*.py))) e2e_flows_default_qps fanout_default_qps

bench: install runtime-venv control-plane
	@rm -rf $(BENCH_OUT) && mkdir -p $(BENCH_OUT)
	@for name in $(BENCHES); do \
		case $$name in \
			e2e_flows_default_qps) cmd="bench/e2e_flows.py --default-qps" ;; \
			fanout_default_qps) cmd="bench/fanout.py --default-qps" ;; \
			*) cmd="bench/$$name.py" ;; \
		esac; \
		echo "== $$cmd" >&2; \
		$(BIN)/python $$cmd > $(BENCH_OUT)/$$name.json; echo $$? > $(BENCH_OUT)/$$name.rc; \
		cat $(BENCH_OUT)/$$name.json; \
	done
	@$(BIN)/python bench/summary.py $(BENCH_OUT)
	@! grep -qvx 0 $(BENCH_OUT)/*.rc

clean:
	rm -rf $(VENV) $(RUNTIME_VENV) .pytest_cache .mypy_cache .ruff_cache .import_linter_cache .bench-results
