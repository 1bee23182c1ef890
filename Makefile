# valorch — make run (the main job on the embedded default), make test (everything).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
EXTRAS ?= test,torch

.PHONY: run test unit test-images engine bench docs clean

$(BIN)/valorch: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[$(EXTRAS)]'
	touch $@

## The main job: the smoke suite on the local interpreter (no Docker needed),
## results in ./results/valorch.sqlite, then the compatibility matrix.
run: $(BIN)/valorch
	$(BIN)/valorch run --job jobs/smoke.yaml

## The whole test suite, unit and integration, against a real Docker engine
## (started when none answers) and the locally built test images.
test: $(BIN)/valorch engine test-images
	$(BIN)/python -m pytest

## Unit tests only (no Docker).
unit: $(BIN)/valorch
	$(BIN)/python -m pytest tests/unit

engine:
	scripts/ensure-engine.sh

test-images: engine
	PYTHON=$(BIN)/python scripts/build-test-images.sh

bench: $(BIN)/valorch engine test-images
	$(BIN)/python bench/run_all.py

docs: $(BIN)/valorch
	$(BIN)/python scripts/gen-checks-doc.py

clean:
	rm -rf results .pytest_cache
