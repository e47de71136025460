# Every target sets up .venv from the lock file first (once; again when the lock changes).
# The interpreter .venv is made from; empty: scripts/make-venv.sh chooses, and says why (the
# system's optimized python3 where it is 3.11+, else python3).
PYTHON ?=
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat requirements.lock pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: install example example-baseline screenshots test lint bench bench-quick bench-action lock clean

# Bytecode is compiled at install: machines that set PYTHONDONTWRITEBYTECODE (CI here does)
# would otherwise compile every module on every start, which doubled ADK's first-run time; so
# are our Jinja templates (0.1 s a run that renders the comment and report.html).
$(STAMP): requirements.lock pyproject.toml src/agent_eval_action/agent_worker/_audit_hook.c
	test -x $(BIN)/python || scripts/make-venv.sh $(VENV) $(PYTHON)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -r requirements.lock
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -e .
	$(BIN)/python -m agent_eval_action.agent_worker.native
	$(BIN)/python -m compileall -q src
	PYTHONPATH=src $(BIN)/python -m agent_eval_action.views
	rm -f $(VENV)/.installed-* && touch $(STAMP)

install: $(STAMP)

## The main job on the bundled example, offline (scripted model): the PR check of the agent as it
## is now against the baseline committed before its discount cap was lowered. The gate fails on
## that regression (exit 1), which is what this target shows; any other failure fails it.
example: install
	@cd examples/customer_service && ../../$(BIN)/python -m agent_eval_action check --no-comment --output-dir ../../agent-eval-results; \
	rc=$$?; \
	if [ $$rc -eq 1 ]; then echo "make example: the gate failed (exit 1) on the regression the example ships: open agent-eval-results/report.html"; exit 0; fi; \
	exit $$rc

## The README's screenshots of the comment and report.html, from make example's output
## (needs chromium, cmark-gfm and fonts-noto-color-emoji; pngquant, if installed, shrinks the PNGs).
screenshots: example
	PYTHONPATH=src:. $(BIN)/python scripts/screenshots.py --results agent-eval-results --out docs/screenshots

## Lint, and type-check src, tests and bench (strict; the files and overrides are in pyproject.toml).
lint: install
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts
	$(BIN)/mypy
	cd src && ../$(BIN)/lint-imports --no-cache --config ../pyproject.toml
	$(BIN)/actionlint -shellcheck= examples/workflows/*.yml .github/workflows/*.yml
	$(BIN)/hadolint --failure-threshold error Dockerfile

## Lint, type-check and run the tests (pytest's "no tests collected" counts as a failure here).
## Three pytest workers (pytest-xdist) on two cores: most tests wait on subprocesses, agent workers
## and timeouts (a hostile question's 5 s), so a third fills the waits (2 cores, quiet: 183 s with two,
## 174 s with three). Each worker starts with a third of the tests and one that runs out takes half
## of the longest queue (--dist worksteal; --dist load sent the slow modules in the first batches
## and one worker ran 20 s alone at the end: 177-182 s against 171-172 s), so a module-scoped
## fixture may be built on each. Not loadgroup: xdist 3.8 cannot group tests under pytest 9.2.
## The longest tests are collected first (tests/conftest.py), so they start first.
test: lint
	$(BIN)/python -m pytest -q -n 3 --dist worksteal; rc=$$?; [ $$rc -ne 5 ] || echo "pytest collected no tests: that is a failure here"; exit $$rc

## Benchmarks, side by side in one run (see docs/performance.md; about 30 minutes on 2 cores: it prints each family's minutes). BENCH=recorded,agent
## runs only those families (python -m bench.run --only ...; the names: recorded agent fresh_process views pr_reuse
## judges cli suite aa_gate aa_real base_mode quota observed_inputs action_start). ADK's AgentEvaluator needs ADK's
## eval extra, which drags in scipy and scikit-learn: it gets a venv of its own so it cannot slow the others.
bench: install
	test -x .venv-bench/bin/python || scripts/make-venv.sh .venv-bench $(PYTHON)
	$(BIN)/uv pip install --quiet --compile-bytecode --python .venv-bench/bin/python -r requirements.bench.lock
	$(BIN)/uv pip install --quiet --python .venv-bench/bin/python --no-deps -e .
	-bash scripts/container-setup.sh --registry
	AGENT_EVAL_BENCH_ADK_PYTHON=.venv-bench/bin/python PYTHONPATH=src $(BIN)/python -m bench.run $(if $(BENCH),--only $(BENCH))

## The rows that are stable in a short run, run and judged (about three minutes): recorded scoring at
## 2,000 rows, CLI start, the judge calls, a one-question PR's model calls (bench.run --stable).
bench-quick: install
	PYTHONPATH=src $(BIN)/python -m bench.run --stable

## The action's start alone (also in make bench): job start -> first question with the image built
## from the Dockerfile against pulled prebuilt, and the image's size; COMPARE=main also builds that
## ref's image for its size. Without podman (and apt to install it) it says what it skipped.
bench-action: install
	-bash scripts/container-setup.sh --registry
	PYTHONPATH=src $(BIN)/python -m bench.action_start $(if $(COMPARE),--compare-ref $(COMPARE))

## Re-resolve the pinned dependencies after editing pyproject.toml: the dev lock (.venv: everything
## the tests need) and the runtime lock the image installs (the vertex extra, no dev extra), each
## keeping its current pins where it can.
lock: install
	$(BIN)/uv pip compile pyproject.toml --extra dev --extra vertex --python-version 3.11 --quiet -o requirements.lock
	$(BIN)/uv pip compile pyproject.toml --extra vertex --python-version 3.11 --quiet -o requirements.runtime.lock

clean:
	rm -rf $(VENV) agent-eval-results bench/out .pytest_cache .mypy_cache .ruff_cache

## Write the bundled example's baseline again (after a change to what results hold).
example-baseline: install
	bash scripts/example-baseline.sh
