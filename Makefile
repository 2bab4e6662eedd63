# Two commands do all set-up on a fresh machine:
#   make demo   runs `porter run` on the example notebook and writes reports/
#   make test   runs the whole test suite (browser tests included)
VENV ?= .venv
PY := $(VENV)/bin/python
NOTEBOOK ?= notebooks/01_port_a_torch_function.ipynb

.PHONY: setup demo test chromium node bwrap lint bench

#: the JupyterLab extension's sources: `pip install` rebuilds it when one changes (its
#: types are generated from porter's report schema at each build)
LABEXTENSION := labextension/package.json labextension/yarn.lock \
	porter_ext/report/schema/report-1.schema.json labextension/scripts/schema-types.js \
	$(wildcard labextension/src/*.ts labextension/style/*)

setup: node bwrap $(VENV)/.installed

# bubblewrap seals replay workers off the person's files for a person who is not root
# (as root porter uses util-linux's unshare); without either, only the audit hook applies
bwrap:
	@command -v bwrap >/dev/null || (apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null) || echo "bubblewrap not installed: workers of a non-root person fall back to the audit hook"

# pip install builds the JupyterLab extension (hatch-jupyter-builder runs jlpm, which
# jupyterlab brings, and needs Node.js >= 18)
node:
	@command -v node >/dev/null || (apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null)

# torch==2.13.0 first: a CPU build of exactly that version is cached on these machines;
# the `torch` extra pins the same version so that nothing pulls a CUDA build.
$(VENV)/.installed: pyproject.toml $(LABEXTENSION)
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[dev]"
	touch $@

demo: setup
	mkdir -p reports
	$(VENV)/bin/porter run $(NOTEBOOK) -b numpy,jax,strict -o reports/$(notdir $(NOTEBOOK:.ipynb=)).json
	$(VENV)/bin/porter report reports/$(notdir $(NOTEBOOK:.ipynb=)).json -o reports/$(notdir $(NOTEBOOK:.ipynb=)).html

chromium:
	@test -x /usr/bin/chromium || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)

# Two runs: Playwright's sync API marks the main thread's event loop as running for the
# rest of its process, which top-level-await tests of %%port cells must not see.
# PORTER_DEBUG=1 (also set by tests/conftest.py): porter's internal errors fail tests.
# First the extension's TypeScript unit tests (jest, labextension/src/__tests__: seconds).
# The rest runs in PYTEST_WORKERS processes (pytest-xdist): most tests wait on kernels,
# workers and subprocesses, so 3 on 2 cores is faster than 2; --dist loadfile keeps a
# file's tests in one process, so its module-scoped shells, kernels and servers start once.
PYTEST_WORKERS ?= 3
test: setup chromium
	cd labextension && PATH="$(abspath $(VENV))/bin:$$PATH" jlpm test
	PORTER_DEBUG=1 $(PY) -m pytest -q --ignore=tests/browser -n $(PYTEST_WORKERS) --dist loadfile
	PORTER_DEBUG=1 $(PY) -m pytest -q tests/browser

lint: setup
	$(VENV)/bin/ruff check porter_ext tests benchmarks
	$(VENV)/bin/ruff format --check porter_ext tests benchmarks
	cd labextension && PATH="$(abspath $(VENV))/bin:$$PATH" jlpm lint:check

bench: setup
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done
