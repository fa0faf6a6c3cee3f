# Two commands do all set-up on a fresh machine:
#   make book   build the HTML book (renders the committed runs; executes only stale notebooks)
#   make test   run the test suite
# Both create .venv when it is missing, installing torch==2.13.0 *first* (a bare `torch`
# would pull the newest CUDA build, several GB), then the project with pinned book tools.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Datasets: this folder's data/ unless STITCHKIT_DATA_ROOT says otherwise; the offline copies
# in ../shared/data are used when they sit beside the checkout.
STITCHKIT_DATA_ROOT ?= $(if $(wildcard ../shared/data),$(abspath ../shared/data),$(abspath data))
export STITCHKIT_DATA_ROOT
SCALE ?=
# Test processes (pytest-xdist): the suite is mostly notebooks of one thread's worth of work each.
TEST_WORKERS ?= 2

.PHONY: install book check test bench clean

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[book,dev,dask]"
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

install: $(VENV)/.installed

book: install
	$(VENV)/bin/stitchkit book $(if $(SCALE),--scale $(SCALE),)

XDIST = $(if $(filter-out 0 1,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadgroup,)

# the whole suite (CI's command, the README's): every notebook at smoke, the browser checks
check: install
	$(PY) -m pytest -q $(XDIST)

# the fast part while working: everything not marked slow
test: install
	$(PY) -m pytest -q -m "not slow" $(XDIST)

bench: install
	$(PY) benchmarks/run_all.py $(if $(QUICK),--quick,)

clean:
	rm -rf _build runs
