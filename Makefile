# `make demo` and `make test` each set themselves up from a fresh clone.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The test tools (pytest, Playwright, mypy, ruff, …) come on top, for `make test` and its kin.
TEST_STAMP := $(VENV)/.installed-test
CODE   := harness tests bench scripts

.PHONY: demo test lint typecheck bench fuzz fixtures agree clean

# The runtime alone: what `make demo` needs.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(TEST_STAMP)

demo: $(STAMP)
	$(BIN)/python scripts/demo.py

# `judge agree` over the shipped labelled sessions, judged from their recorded stand-in
# replies (no key, no network): the figures show how the command reads, not a model's quality.
agree: $(STAMP)
	@echo "make agree: the recorded replies are stand-ins (word overlap for the audit, simple"
	@echo "session features for the judge), not a model: the figures show how judge agree"
	@echo "reads, and say nothing about a Claude model's quality."
	rm -rf agree-out && mkdir -p agree-out && cp -r sessions_fixture/labelled/sessions agree-out/
	$(BIN)/judge batch agree-out/sessions --replay-dir sessions_fixture/labelled/replays -q \
	  > agree-out/batch.jsonl
	$(BIN)/judge agree sessions_fixture/labelled/labels.jsonl --root agree-out/sessions \
	  --html agree-out/agree.html
	$(BIN)/judge report agree-out/sessions --labels sessions_fixture/labelled/labels.jsonl

# Lint, then types, then the tests (make runs the prerequisites in this order).
test: lint typecheck
	$(BIN)/pytest

# ruff, then the layer contract in pyproject.toml ([tool.importlinter]).
lint: $(TEST_STAMP)
	$(BIN)/ruff check $(CODE)
	$(BIN)/ruff format --check $(CODE)
	$(BIN)/lint-imports

typecheck: $(TEST_STAMP)
	$(BIN)/mypy

# Benchmarks print their figures; they are not timed tests (machines are noisy).
bench: $(TEST_STAMP)
	$(BIN)/python bench/bench_load.py
	$(BIN)/python bench/bench_cite.py
	$(BIN)/python bench/bench_audit.py
	$(BIN)/python bench/bench_load_runs.py
	$(BIN)/python bench/bench_text.py
	$(BIN)/python bench/bench_report.py
	$(BIN)/python bench/bench_numbers.py
	$(BIN)/python bench/bench_batch.py

# A longer run of the property and fuzz tests than `make test` allows.
fuzz: $(TEST_STAMP)
	HYPOTHESIS_PROFILE=fuzz JUDGE_TRIED_REPORT=fuzz-tried.json $(BIN)/pytest -q \
	  tests/adversarial/test_escapes.py tests/adversarial/test_malformed.py \
	  tests/adversarial/test_injection.py tests/adversarial/test_hostile_trees.py \
	  tests/adversarial/test_hostile_trees_api.py tests/adversarial/test_terminal.py \
	  tests/contract/test_judgment.py tests/net/test_urlguard.py tests/fs tests/text \
	  tests/audit/test_number_forms.py

fixtures: $(TEST_STAMP)
	$(BIN)/python scripts/build_fixtures.py

clean:
	rm -rf $(VENV) demo-out agree-out .pytest_cache .mypy_cache .ruff_cache
