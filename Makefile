# Two commands do all set-up on a fresh machine:
#   make demo   runs `porter run` on the example notebook and writes reports/
#   make test   runs the whole test suite (browser tests included)
VENV ?= .venv
PY := $(VENV)/bin/python
NOTEBOOK ?= notebooks/01_port_a_torch_function.ipynb

.PHONY: setup demo test chromium lint bench

setup: $(VENV)/.installed

# torch==2.13.0 first: a CPU build of exactly that version is cached on these machines;
# the `torch` extra pins the same version so that nothing pulls a CUDA build.
$(VENV)/.installed: pyproject.toml
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

test: setup chromium
	$(PY) -m pytest -q

lint: setup
	$(VENV)/bin/ruff check porter_ext tests benchmarks
	$(VENV)/bin/ruff format --check porter_ext tests benchmarks

bench: setup
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done
