# valorch — make run (the main job on the embedded default), make test (everything).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: run test unit test-images engine bench docs clean

# The run environment: valorch and PyTorch for the host interpreter. Its bytecode is
# compiled as pip compiles a wheel's: an editable install leaves that to the first run,
# which never happens where PYTHONDONTWRITEBYTECODE is set (each command would compile
# every module it imports again, on every `valorch run`).
$(VENV)/.run-env: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -e '.[test,torch]'
	$(BIN)/python -m compileall -q orchestrator >/dev/null
	touch $@

# The test environment adds tensorflow-cpu (the host is the TensorFlow environment),
# the Kubernetes client (its manifests are checked against the client models) and
# psycopg (the PostgreSQL store tests run against a real server).
$(VENV)/.test-env: $(VENV)/.run-env
	$(BIN)/python -m pip install -q -e '.[test,torch,tensorflow,k8s,postgres]'
	touch $@

## The main job: the smoke suite on the local interpreter (no Docker needed),
## results in ./results/valorch.sqlite, then the compatibility matrix.
run: $(VENV)/.run-env
	$(BIN)/valorch run --job jobs/smoke.yaml

## The whole test suite, unit and integration, against a real Docker engine
## (started when none answers) and the locally built test images.
test: $(VENV)/.test-env engine test-images
	$(BIN)/python -m pytest

## Unit tests only (no Docker).
unit: $(VENV)/.test-env
	$(BIN)/python -m pytest tests/unit

engine:
	scripts/ensure-engine.sh

test-images: engine
	PYTHON=$(BIN)/python scripts/build-test-images.sh

bench: $(VENV)/.test-env engine test-images
	$(BIN)/python bench/run_all.py

docs: $(VENV)/.run-env
	$(BIN)/python scripts/gen-checks-doc.py

clean:
	rm -rf results .pytest_cache
