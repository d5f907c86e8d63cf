# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev

# The core's tests, run a second time on the pure-Python modules (what runs where no C compiler
# was) when `make test` has run the whole suite on the compiled ones.
PURE_TESTS := tests/test_golden.py tests/test_properties.py tests/test_linked_search.py \
	tests/test_matching.py tests/test_rules.py tests/test_dataflow.py tests/test_cases.py \
	tests/test_summary.py tests/test_parallel.py tests/test_assignment.py \
	tests/test_overlap_paths.py

.PHONY: demo build test lint typecheck pytest bench mutation clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml setup.py | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The compiled accelerator in place (setup.py): recompiles each module whose .py changed since
# its last build, a no-op otherwise; without a C compiler it warns and the .py sources run.
build: $(STAMP)
	$(BIN)/python setup.py --quiet build_ext --inplace

demo: $(STAMP)
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
