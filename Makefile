# nandlab: `make demo` runs the main experiment, `make test` runs every test.
# Both install what they need: Rust crates through cargo, Python packages into .venv (git-ignored).

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
CARGO ?= cargo
NANDLAB := $(or $(CARGO_TARGET_DIR),target)/release/nandlab

.PHONY: demo test test-deps test-rust test-debug test-python build venv develop lint fmt bench perf-gate clean

demo: build
	$(NANDLAB) demo

build:
	$(CARGO) build --release --bin nandlab

test: test-rust test-debug test-python

test-rust: test-deps
	scripts/size-limits
	$(CARGO) test --workspace --profile test-release

# The real software the `nandlab serve` tests run (nbdkit, fio, nbdfuse, fuse2fs, sqlite3,
# python3-libnbd, PostgreSQL and pgbench).
test-deps:
	scripts/install-test-deps

# The simulation layers once more with debug assertions on (their invariants are
# debug_asserts on the hot paths; release builds skip them).
test-debug:
	$(CARGO) test -p nandlab-core -p nandlab-nand -p nandlab-ftl

test-python: develop
	$(VPY) -m pytest -q

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet "maturin>=1.7,<2" "pytest>=8" "mypy>=1.10" "numpy>=1.24" "pandas>=2.0" "matplotlib>=3.7" "tqdm>=4.60" pandas-stubs types-tqdm ruff "dask[distributed]>=2024.1"
	touch $@

venv: $(VENV)/.installed

# Builds the extension into the virtualenv (release profile, abi3).
develop: venv build
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin develop --release --quiet

lint: venv
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --release -- -D warnings
	cd crates/workload/fuzz && $(CARGO) check --bins --locked  # the fuzz targets still compile
	$(VENV)/bin/ruff format --check python
	$(VENV)/bin/ruff check python

fmt:
	$(CARGO) fmt --all

bench: build
	$(NANDLAB) bench chip

# Instructions of `nandlab bench ssd --requests 300000` under callgrind against the figure in
# scripts/perf-gate.baseline (fails above +2 %; installs valgrind if missing; not in `make test`).
perf-gate: build
	scripts/perf-gate --binary $(NANDLAB)

clean:
	$(CARGO) clean
	rm -rf $(VENV)
