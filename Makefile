# `make demo` and `make test` each set themselves up from a fresh clone.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
CODE   := harness tests bench scripts

.PHONY: demo test lint typecheck bench fuzz fixtures clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python scripts/demo.py

# Lint, then types, then the tests (make runs the prerequisites in this order).
test: lint typecheck
	$(BIN)/pytest

# ruff, then the layer contract in pyproject.toml ([tool.importlinter]).
lint: $(STAMP)
	$(BIN)/ruff check $(CODE)
	$(BIN)/ruff format --check $(CODE)
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

# Benchmarks print their figures; they are not timed tests (machines are noisy).
bench: $(STAMP)
	$(BIN)/python bench/bench_load.py
	$(BIN)/python bench/bench_cite.py
	$(BIN)/python bench/bench_audit.py
	$(BIN)/python bench/bench_load_runs.py
	$(BIN)/python bench/bench_text.py
	$(BIN)/python bench/bench_report.py
	$(BIN)/python bench/bench_numbers.py
	$(BIN)/python bench/bench_batch.py

# A longer run of the property and fuzz tests than `make test` allows.
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz JUDGE_TRIED_REPORT=fuzz-tried.json $(BIN)/pytest -q \
	  tests/test_escapes.py tests/test_malformed.py tests/test_injection.py \
	  tests/test_judgment.py tests/agent/test_scope.py tests/agent/test_urlguard.py \
	  tests/fs tests/text tests/test_hostile_trees.py tests/test_hostile_trees_api.py \
	  tests/audit/test_number_forms.py tests/test_terminal.py

fixtures: $(STAMP)
	$(BIN)/python scripts/build_fixtures.py

clean:
	rm -rf $(VENV) demo-out .pytest_cache .mypy_cache .ruff_cache
