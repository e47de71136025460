# Every target sets up .venv from the lock file first (once; again when the lock changes).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat requirements.lock pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: install example test lint bench lock clean

# Bytecode is compiled at install: machines that set PYTHONDONTWRITEBYTECODE (CI here does)
# would otherwise compile every module on every start, which doubled ADK's first-run time.
$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -r requirements.lock
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -e .
	$(BIN)/python -m compileall -q src
	rm -f $(VENV)/.installed-* && touch $(STAMP)

install: $(STAMP)

## Run the bundled customer-service agent on its golden dataset (offline: scripted model) and score it.
example: install
	cd examples/customer_service && ../../$(BIN)/python -m agent_eval_action evaluate \
		evaluation/datasets/customer_service_golden.json --agent customer_service --output-dir ../../agent-eval-results

lint: install
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/actionlint -shellcheck= examples/workflows/*.yml
	$(BIN)/hadolint --failure-threshold error Dockerfile

## Lint, type-check and run the tests (pytest's "no tests collected" counts as a failure here).
test: lint
	$(BIN)/python -m pytest -q; rc=$$?; [ $$rc -ne 5 ] || echo "pytest collected no tests: that is a failure here"; exit $$rc

## Benchmarks, side by side in one run (see README). ADK's AgentEvaluator needs ADK's eval extra,
## which drags in scipy and scikit-learn: it gets a venv of its own so it cannot slow the others.
bench: install
	test -x .venv-bench/bin/python || $(PYTHON) -m venv .venv-bench
	$(BIN)/uv pip install --quiet --compile-bytecode --python .venv-bench/bin/python -r requirements.bench.lock
	$(BIN)/uv pip install --quiet --python .venv-bench/bin/python --no-deps -e .
	AGENT_EVAL_BENCH_ADK_PYTHON=.venv-bench/bin/python PYTHONPATH=src $(BIN)/python -m bench.run

## Re-resolve the pinned dependencies after editing pyproject.toml.
lock: install
	$(BIN)/uv pip compile pyproject.toml --extra dev --python-version 3.11 --quiet -o requirements.lock

clean:
	rm -rf $(VENV) agent-eval-results bench/out .pytest_cache .mypy_cache .ruff_cache
