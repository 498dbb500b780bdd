# fabricsim: set up a virtualenv, build the Rust engine into it, run, test and benchmark.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(VENV))/bin:$(PATH)

.PHONY: setup build run test test-rust test-python bench clean

$(VENV)/.deps: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "maturin>=1.7,<2" "pydantic>=2.7" "networkx>=3.2" "numpy>=1.26" "click>=8.1" "rich>=13" "pytest>=8" "hypothesis>=6"
	touch $@

## setup: create .venv, install Python dependencies, build the Rust engine (release) into it
setup: $(VENV)/.deps
	$(VENV)/bin/maturin develop --release
	$(PY) -c "import fabricsim._core" || (echo "fabricsim build failed" >&2; exit 1)

## run: the main job (the example scenarios until the first study lands)
run: setup
	@for f in examples/*.toml; do $(VENV)/bin/fabricsim run $$f || exit $$?; echo; done

## test: every test (cargo, then pytest)
test: setup test-rust test-python

test-rust:
	cargo test --release --workspace --exclude fabricsim-py -q

test-python:
	$(PY) -m pytest -q -m "not slow"

## bench: engine throughput (events/s) on a fixed scenario
bench: setup
	$(PY) benchmarks/bench_engine.py

clean:
	rm -rf $(VENV) target
