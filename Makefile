# fabricsim: set up a virtualenv, build the Rust engine into it, run, test and benchmark.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(VENV))/bin:$(PATH)
# The project's shared/ folder (test data): beside the checkout, as in CI, or beside the repository this one
# was cloned from (git clone . /tmp/x); tests and benchmarks read FABRICSIM_SHARED.
FABRICSIM_SHARED ?= $(abspath $(firstword $(wildcard ../shared) $(wildcard $(dir $(abspath $(shell git config --get remote.origin.url 2>/dev/null)))shared)))
export FABRICSIM_SHARED

.PHONY: setup build run test test-rust test-python browser check-install bench validate docs clean

$(VENV)/.deps: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "maturin>=1.7,<2" "pydantic>=2.7" "networkx>=3.2" "numpy>=1.26" "click>=8.1" "rich>=13" \
		"scipy>=1.11" "pandas>=2.1" "pyarrow>=14" "matplotlib>=3.8" "dask[distributed]>=2024.1" "pytest>=8" "hypothesis>=6" \
		"ortools>=9.10" "highspy>=1.7,<1.13" "import-linter>=2.1" "ruff>=0.17,<0.18"
	touch $@

## setup: create .venv, install Python dependencies, build the Rust engine (release) into it
setup: $(VENV)/.deps
	$(VENV)/bin/maturin develop --release
	$(PY) -c "import fabricsim._core" || (echo "fabricsim build failed" >&2; exit 1)

## run: the main job: reproduce every study on the quick setting into fabricsim-outputs/<study>/, then write
## the HTML report, fabricsim-outputs/report.html
run: setup
	$(VENV)/bin/fabricsim reproduce all --quick --out fabricsim-outputs
	$(VENV)/bin/fabricsim report --out fabricsim-outputs

## test: every test (cargo, then pytest); the browser tests need Chromium (see browser)
test: setup browser test-rust test-python

## browser: headless Chromium for the browser tests (tests/test_browser.py, tests/test_report_render.py): nothing
## if one is on PATH; else installed with apt-get (Debian's chromium) when apt-get exists and we are root; else one
## line says why the browser tests will skip. Never fails the build: without a browser those tests skip.
BROWSERS := chromium chromium-browser google-chrome chrome
browser:
	@if (for b in $(BROWSERS); do command -v $$b >/dev/null 2>&1 && exit 0; done; exit 1); then :; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
		echo "browser tests will skip: no Chromium on PATH and no apt-get to install it (install chromium or google-chrome)"; \
	elif [ "$$(id -u)" != 0 ]; then \
		echo "browser tests will skip: no Chromium on PATH, and apt-get needs root (sudo apt-get install chromium)"; \
	else \
		echo "installing chromium with apt-get for the browser tests"; \
		{ DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } >/dev/null 2>&1 \
		|| echo "browser tests will skip: apt-get install chromium failed (run it by hand to see why)"; \
	fi

## test-rust: formatting (rustfmt.toml) and clippy with warnings as errors, then the cargo tests
test-rust:
	@cargo fmt --version >/dev/null 2>&1 && cargo clippy --version >/dev/null 2>&1 || { echo "test-rust needs the rustfmt and clippy components: rustup component add rustfmt clippy" >&2; exit 1; }
	cargo fmt --all -- --check
	cargo clippy --release --workspace --all-targets -q -- -D warnings
	cargo test --release --workspace --exclude fabricsim-py -q

test-python:
	$(PY) -m ruff check python tests benchmarks experiments
	$(PY) -m pytest -q -m "not slow"

## check-install: build the wheel, install it into a fresh venv, and from a temporary folder copy the examples,
## run the Quick start on them and `fabricsim reproduce engine_checks --quick && fabricsim report` (minutes)
check-install: setup
	$(PY) -m pytest -q -m slow tests/test_install.py

## bench: packet-engine throughput (events/s), hybrid fidelity's error and speed-up (its corpus, Table IV), placement-advisor decisions (24 and 6,144 servers), the cluster simulator (1,000 jobs on 6,144 servers), fabric scale (k=16 packet, k=48 flow, 8,192-GPU rail), the RoCE incast, front-door timings (bulk workloads, RSS), flow-engine scale (10k hosts, 129k flows), sweep overhead (runs/s), FORS and ATRO solve times, study 003 grid, command-line startup (vs python -c pass), fabricsim train at scale (GPT-3 175B on 1,024 GPUs, SimAI's 9,216-GPU MoE example beside SimAI_analytical)
bench: setup
	$(PY) benchmarks/bench_frontdoor.py
	$(PY) benchmarks/bench_engine.py
	$(PY) benchmarks/bench_flow.py
	$(PY) benchmarks/bench_sweep.py
	$(PY) benchmarks/bench_fors.py
	$(PY) benchmarks/bench_ina.py
	$(PY) benchmarks/bench_cpo.py
	$(PY) benchmarks/bench_chakra.py
	$(PY) benchmarks/astra_sim_compare.py
	$(PY) benchmarks/bench_startup.py
	$(PY) benchmarks/bench_fabrics.py
	$(PY) benchmarks/bench_roce.py
	$(PY) benchmarks/bench_place.py
	$(PY) benchmarks/bench_cluster.py
	$(PY) benchmarks/hybrid_error.py
	$(PY) benchmarks/hybrid_table4.py
	$(PY) benchmarks/hybrid_scale.py
	$(PY) benchmarks/bench_train.py

## validate: install ns-3 3.44 (PyPI ns3) into the venv and cross-check the incast study side by side, then race
## it on a k = 8 fat-tree permutation (benchmarks/VS_NS3_FATTREE.md; k = 16: --k 16 --max-ns3-wall 600), then the
## RoCE incasts beside HPCC's ns-3 fork when it is built (benchmarks/HPCC_NS3.md; fabricsim's side alone otherwise),
## then the k = 8 fat-tree RoCE permutation, incast and one packet beside htsim when it is built (benchmarks/HTSIM.md;
## fabricsim's side alone otherwise), then SimAI's AICB workloads beside SimAI_analytical when it is built
## (benchmarks/SIMAI.md, section 8; against SimAI's stored runs otherwise), then the UEC transport's k = 8 permutation
## and 32 -> 1 incast beside uet-htsim's htsim_uec when it is built (benchmarks/UET_HTSIM.md; fabricsim's side beside
## the stored reference runs otherwise)
validate: setup
	$(PY) -m pip install -q "ns3==3.44.post0"
	$(PY) benchmarks/validate_incast.py
	$(PY) benchmarks/vs_ns3_fattree.py --k 8
	$(PY) benchmarks/vs_hpcc_ns3.py
	$(PY) benchmarks/vs_htsim.py
	$(PY) benchmarks/vs_simai.py
	$(PY) benchmarks/vs_uet_htsim.py

## docs: the user guide (mkdocs, material theme) into site/; the reference pages (scenario keys, command line,
## Python API) are generated from the code (docs/gen_reference.py, also at build time); strict, so a broken link
## fails the build
docs: setup
	$(PY) -m pip install -q "mkdocs>=1.6,<2" "mkdocs-material>=9.5"
	$(VENV)/bin/mkdocs build --strict

clean:
	rm -rf $(VENV) target site
