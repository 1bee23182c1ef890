# valorch — make run (the main job on the embedded default), make test (everything).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: run test unit quick cli typecheck lint probe-pythons test-images engine bench docs clean

# The test groups by what they need (markers, tests/needs.py; docs/testing.md).
NEEDS_COMPONENTS := docker or slurm or browser or postgres
# Parallel workers (pytest-xdist): a file's tests stay on one worker, the files that share a
# resource with a fixed place on the machine share one (tests/parallel.py; docs/testing.md).
# One worker more than the CPUs: the tests wait on engines, registries and containers often
# enough that a third worker on 2 cores finished the suite in two thirds of the time, a
# fourth no sooner; the tests that interrupt work hold it at a point it cannot pass, so the
# contention changes no outcome (docs/testing.md). WORKERS=0 runs the tests in this process.
WORKERS  ?= $(shell echo $$(( $$(nproc) + 1 )))
PARALLEL := -n $(WORKERS) --dist loadfile
QUICK := not cli and not torch and not ($(NEEDS_COMPONENTS))

# The run environment: valorch and PyTorch for the host interpreter. Its bytecode is
# compiled as pip compiles a wheel's: an editable install leaves that to the first run,
# which never happens where PYTHONDONTWRITEBYTECODE is set (each command would compile
# every module it imports again, on every `valorch run`).
$(VENV)/.run-env: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -e '.[test,torch,all]'
	$(BIN)/python -m compileall -q orchestrator >/dev/null
	touch $@

# The test environment adds tensorflow-cpu (the host is the TensorFlow environment),
# the Kubernetes client (its manifests are checked against the client models) and
# psycopg (the PostgreSQL store tests run against a real server).
$(VENV)/.test-env: $(VENV)/.run-env
	$(BIN)/python -m pip install -q -e '.[test,torch,tensorflow,all,postgres]'
	touch $@

## The main job: the smoke suite on the local interpreter (no Docker needed),
## results in ./results/valorch.sqlite, then the compatibility matrix.
run: $(VENV)/.run-env
	$(BIN)/valorch run --job jobs/smoke.yaml

## The whole test suite, unit and integration, against a real Docker engine
## (started when none answers) and the locally built test images. What comes before
## pytest runs side by side, each to its end before pytest starts: lint (mypy is most of
## it), the probe's tests on Python 3.8 and 3.13, the engine and the test images.
test: $(VENV)/.test-env
	$(MAKE) --no-print-directory -j3 --output-sync=target lint probe-pythons test-images
	$(BIN)/python -m pytest $(PARALLEL)

# The probe runs on the images' interpreters (Python 3.8 and newer): its own unit tests, the
# ones that import nothing but the probe (tests/unit/test_probe_pythons.py keeps this list
# whole), also run on the oldest Python it supports and on the newest, each in a small venv
# with pytest and hypothesis (and pygments, which test_sandbox copies for a workload's pytest).
PYENV_ROOT ?= $(HOME)/.pyenv
PYTHON38   ?= $(PYENV_ROOT)/versions/3.8.18/bin/python
PYTHON313  ?= $(PYENV_ROOT)/versions/3.13.0/bin/python
PROBE_TESTS := tests/unit/test_probe_blas_log.py tests/unit/test_probe_crash_log.py \
	tests/unit/test_probe_evidence.py tests/unit/test_probe_multinode.py \
	tests/unit/test_probe_runner.py tests/unit/test_probe_suites.py \
	tests/unit/test_probe_tools.py tests/unit/test_sandbox.py \
	tests/unit/test_cuda_wheel_captures.py tests/unit/test_dist_ranks_end_fast.py \
	tests/unit/test_kernel_library_table.py tests/unit/test_loaded_libs.py \
	tests/unit/test_nccl_log.py tests/unit/test_probe_vendor_log.py \
	tests/unit/test_probe_suite_modules.py tests/unit/test_probe_results_before_next_check.py \
	tests/unit/test_rocm_userspace_captures.py \
	tests/unit/test_rows_decide_from_evidence.py

.venv-py38/.probe-env:
	$(PYTHON38) -m venv .venv-py38
	.venv-py38/bin/python -m pip install -q pytest hypothesis pygments
	touch $@

.venv-py313/.probe-env:
	$(PYTHON313) -m venv .venv-py313
	.venv-py313/bin/python -m pip install -q pytest hypothesis pygments
	touch $@

## The probe's own unit tests on Python 3.8 and on the newest Python (pyenv's).
probe-pythons: .venv-py38/.probe-env .venv-py313/.probe-env
	PYTHONPATH=$(CURDIR) .venv-py38/bin/python -m pytest -q -p no:cacheprovider $(PROBE_TESTS)
	PYTHONPATH=$(CURDIR) .venv-py313/bin/python -m pytest -q -p no:cacheprovider $(PROBE_TESTS)

## The house style, checked (docs/style.md): ruff's lint and format, the layers'
## import contracts, and mypy (the orchestrator and the probe).
lint: $(VENV)/.test-env
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy

## mypy alone, as pyproject.toml configures it (the orchestrator and the probe; strict on
## services, scheduling, store, matrix, regression).
typecheck: $(VENV)/.test-env
	$(BIN)/mypy

## Unit tests only (no Docker).
unit: $(VENV)/.test-env
	$(BIN)/python -m pytest $(PARALLEL) tests/unit -m "not docker"

# The quick group's environment: valorch and its test extras, no PyTorch.
$(VENV)/.quick-env: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -e '.[test,all]'
	touch $@

## The tests that need nothing but valorch: no console script, no PyTorch, no Docker,
## Slurm, browser or PostgreSQL (about a minute).
quick: $(VENV)/.quick-env
	$(BIN)/python -m pytest $(PARALLEL) -m "$(QUICK)"

## The tests that run the valorch console script or the host's PyTorch, still without
## Docker, Slurm, a browser or PostgreSQL.
cli: $(VENV)/.run-env
	$(BIN)/python -m pytest $(PARALLEL) -m "(cli or torch) and not ($(NEEDS_COMPONENTS))"

engine:
	scripts/ensure-engine.sh

test-images: engine $(VENV)/.run-env
	PYTHON=$(BIN)/python scripts/build-test-images.sh

bench: $(VENV)/.test-env engine test-images
	$(BIN)/python bench/run_all.py

docs: $(VENV)/.run-env
	$(BIN)/python scripts/gen-checks-doc.py
	$(BIN)/python scripts/gen-checks-manifest.py

clean:
	rm -rf results .pytest_cache
