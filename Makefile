# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# What is installed in .venv: toolscore and its runtime dependencies (`make demo`), or that with
# the dev extras (`make test` and the others). A dev install is a demo install too.
DEMO_STAMP := $(VENV)/.installed
STAMP := $(VENV)/.installed-dev

# The core's tests, run a second time on the pure-Python modules (what runs where no C compiler
# was) when `make test` has run the whole suite on the compiled ones.
PURE_TESTS := tests/scoring/test_golden.py tests/core/test_properties.py tests/core/test_linked_search.py \
	tests/core/test_matching.py tests/core/test_rules.py tests/core/test_dataflow.py tests/inputs/test_cases.py \
	tests/scoring/test_summary.py tests/engines/test_parallel.py tests/core/test_assignment.py \
	tests/core/test_overlap_paths.py

.PHONY: demo build test lint typecheck pytest bench mutation clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The pure-Python build (setup.py: TOOLSCORE_BUILD), with the runtime dependencies only: what the
# demo needs, in well under a minute; the compiled accelerator is `make build`'s.
$(DEMO_STAMP): pyproject.toml setup.py | $(BIN)/python
	TOOLSCORE_BUILD=pure-python $(BIN)/python -m pip install --quiet -e .
	touch $(DEMO_STAMP)

$(STAMP): pyproject.toml setup.py | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP) $(DEMO_STAMP)

# The compiled accelerator in place (setup.py): recompiles each module whose .py changed since
# its last build, a no-op otherwise; without a C compiler it warns and the .py sources run.
build: $(STAMP)
	$(BIN)/python setup.py --quiet build_ext --inplace

demo: $(DEMO_STAMP)
	$(BIN)/toolscore demo

test: build
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/toolscore --version
	$(BIN)/python -m pytest
	TOOLSCORE_PURE_PYTHON=1 $(BIN)/python -m pytest $(PURE_TESTS)

bench: $(STAMP)
	$(BIN)/python bench/run.py

# Mutation testing of the core (bench/RESULTS.md): about an hour on two cores, under nice.
mutation: $(STAMP)
	$(BIN)/python bench/mutation.py --run

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis mutants build dist
	find src -name '*.so' -delete -o -name '*.pyd' -delete -o -name '*.c' -delete
	rm -rf src/*.egg-info
