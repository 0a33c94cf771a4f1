# mcplens — one Rust core, three front doors. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help
export CARGO_TARGET_DIR ?= $(CURDIR)/target
CARGO ?= cargo

# Language packages add their own targets (build-*, test-*, lint-*) in these fragments.
-include bindings-python/rules.mk
-include bindings-node/rules.mk
-include cli/rules.mk
-include tests/rules.mk
-include tests/soak.mk
-include tests/conformance/rules.mk
-include tests/dashboard/rules.mk
-include tests/phoenix/rules.mk

.PHONY: help build test test-rust lint lint-rust lint-glue fmt bench bench-start bench-core-page bench-rust demo demo-build test-demo test-readme clean

help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

build: $(BUILD_EXTRA) ## Build the workspace (debug)
	$(CARGO) build --workspace --all-features

test: lint test-readme test-rust $(TEST_EXTRA) test-demo ## Lint, then every test in every language, then the demo
	@echo "make test: all suites passed"

test-readme: ## Every README code block is executed by a test
	python3 tests/readme_check.py

test-rust: ## Rust tests (core, shared vectors, rmcp integration)
	$(CARGO) test -p mcplens --all-features

lint: lint-rust lint-glue $(LINT_EXTRA) ## Format check and clippy (and each package's linters), the glue budget

lint-glue: ## Each binding's glue in code lines against a fifth of the core's (tests/glue_budget.py)
	python3 tests/glue_budget.py

lint-rust:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --all-features -- -D warnings

fmt: ## Format the Rust code
	$(CARGO) fmt --all

# Under `make bench` each benchmark may write its summary row into MCPLENS_BENCH_RESULTS; the summary
# (tests/bench_summary.py) prints every row against its goal and fails when a deterministic goal is
# missed. Run alone, a benchmark with a deterministic goal fails by itself.
BENCH_RESULTS := $(CURDIR)/.build/bench
bench: export MCPLENS_BENCH_RESULTS := $(BENCH_RESULTS)
bench: bench-start bench-rust $(BENCH_EXTRA) ## Benchmarks (release; prints µs per page, MB/s and ratios, then the summary against the goals)
	@python3 tests/bench_summary.py $(BENCH_RESULTS)

bench-start:
	@rm -rf $(BENCH_RESULTS)

bench-core-page: ## The core page check alone (callgrind instruction ratio; fails over its goal)
	$(CARGO) bench -p mcplens --all-features --bench page_instructions

bench-rust: ## Rust benchmarks (criterion) and the core page check (callgrind instruction ratio, fails over its goal)
	$(CARGO) bench -p mcplens --all-features

DEMO_VENV := .build/venv-mcp2
DEMO_CLI = $(CARGO_TARGET_DIR)/debug/mcplens

demo-build: build-python $(DEMO_VENV)/.requirements node-install
	$(DEMO_VENV)/bin/pip install --disable-pip-version-check --quiet --no-deps --force-reinstall $(PY_WHEEL)
	$(CARGO) build -q -p mcplens-cli
	$(CARGO) build -q -p mcplens --example discover --all-features

demo: demo-build ## Build, then run the main job end to end: tracked Python server, Node agent, CLI, the events report
	demo/run.sh $(CURDIR)/$(DEMO_VENV)/bin/python $(DEMO_CLI) $(CARGO_TARGET_DIR)/debug/examples/discover

test-demo: demo-build ## The demo, with its output checked for the key lines
	demo/run.sh $(CURDIR)/$(DEMO_VENV)/bin/python $(DEMO_CLI) > .build/demo.out 2>&1 || { cat .build/demo.out; exit 1; }
	python3 demo/check_output.py .build/demo.out

clean: ## Remove build output
	$(CARGO) clean
