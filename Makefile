# Two commands do all set-up on a fresh machine:
#   make book   build the HTML book (renders the committed runs; executes only missing pages)
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

.PHONY: install book rerun check test bench clean wheels gpu-batch

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

# re-run the pages behind their notebook or library (at demo, resuming from the artifact cache), then build
rerun: install
	$(VENV)/bin/stitchkit book --rerun-behind

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

# A lent GPU machine (stitchkit.book.batch): `make wheels` here first: the packages that execute a
# notebook and run a local Dask cluster, which the device's image lacks, as Python 3.12 wheels in .whl/ (debugpy and jedi, which
# ipykernel runs without, left out; so are those the image has: a second version breaks the
# install), and the data archives in .shared-data/. Then the device's one call is `make gpu-batch`
# with carry [.whl, .shared-data]: it installs the wheels and runs the batch within GPU_BUDGET
# seconds, packing the pages into $$OUT/pages.tar.gz for `stitchkit import-pages`.
GPU_BUDGET ?= 550
GPU_PAGES ?=  # the pages to run, in this order (default: the batch's priority order, stitchkit.book.batch)
NOTEBOOK_WHEELS = papermill==2.7.0 nbclient==0.11.0 nbformat==5.11.1 jupytext==1.19.6 ipykernel==7.4.0 \
	dask==2026.8.0 distributed==2026.8.0
DEVICE_HAS = attrs certifi charset_normalizer click idna markdown_it_py mdurl packaging psutil pygments \
	python_dateutil pyyaml PyYAML requests tqdm typing_extensions urllib3 debugpy jedi parso \
	cloudpickle fsspec toolz msgpack sortedcontainers jinja2 Jinja2 markupsafe MarkupSafe
DEVICE_PLATFORMS = manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_26_x86_64 manylinux_2_24_x86_64 \
	manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux_2_12_x86_64 manylinux2010_x86_64 manylinux_2_5_x86_64 manylinux1_x86_64
DATASETS ?= cifar10 mnist

wheels:
	rm -rf .whl && mkdir -p .whl .shared-data
	$(PYTHON) -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
		$(addprefix --platform ,$(DEVICE_PLATFORMS)) -d .whl $(NOTEBOOK_WHEELS)
	cd .whl && for p in $(DEVICE_HAS); do rm -f $$p-*.whl; done
	for d in $(DATASETS); do cp -u $(STITCHKIT_DATA_ROOT)/$$d-images.tar.gz .shared-data/ || exit 1; done
	du -sh .whl .shared-data

gpu-batch:
	@test -n "$(STITCHKIT_COMMIT)" || { echo "make gpu-batch needs STITCHKIT_COMMIT=<the commit this copy was made at> (the device's copy has no usable .git)"; exit 2; }
	STITCHKIT_COMMIT=$(STITCHKIT_COMMIT) BUDGET=$(GPU_BUDGET) bash benchmarks/gpu_batch.sh $(GPU_PAGES)
