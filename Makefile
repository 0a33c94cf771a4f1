# mcplens — one Rust core, three front doors. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help
export CARGO_TARGET_DIR ?= $(CURDIR)/target
CARGO ?= cargo
# How the published artifacts are built (the release workflow sets these; `make test` builds plain
# `--release`): fat LTO and one codegen unit. The benchmarks build with them too, in a target
# directory of their own.
RELEASE_LTO := CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
BENCH_TARGET := $(CARGO_TARGET_DIR)/bench-lto
# When this make started (`make demo` prints the time since).
MAKE_START := $(shell date +%s.%N)
# Release artifacts (the wheel, the Node addon) are built for the host's target triple, named, as
# napi always does: then maturin's and napi's cargo runs share one build of the dependencies.
HOST_TARGET = $(shell $(CARGO) -vV >/dev/null 2>&1 && rustc -vV | sed -n 's/^host: //p')
# What the Rust code of every package is made of (the wheel and the addon add their own crate).
RUST_SOURCES := $(shell find core/src cli/src -name '*.rs') core/Cargo.toml cli/Cargo.toml Cargo.toml Cargo.lock

# Language packages add their own targets (build-*, test-*, lint-*) in these fragments.
-include bindings-python/rules.mk
-include bindings-node/rules.mk
-include cli/rules.mk
-include tests/rules.mk
-include tests/soak.mk
-include tests/conformance/rules.mk
-include tests/dashboard/rules.mk
-include tests/phoenix/rules.mk
-include packaging/rules.mk
-include packaging/cross.mk
-include tests/platforms/rules.mk
-include tests/agents-node/rules.mk
-include tests/lifecycle/rules.mk
-include tests/hosts/rules.mk

.PHONY: help build test check check-rust check-python test-rust lint lint-rust lint-glue fmt bench bench-start bench-core-page bench-rust demo demo-build test-demo test-readme clean

help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

build: $(BUILD_EXTRA) ## Build the workspace (debug)
	$(CARGO) build --workspace --all-features

# The suites run one after another, each timed (with what it builds first); the table of where the
# time went is printed at the end, and at a failure (tests/test_times.py, .build/test-times.tsv).
TEST_SUITES = lint test-readme test-rust $(TEST_EXTRA) test-demo
TEST_TIMES := $(PY_OUT)/test-times.tsv

# $(call timed,suites,table,name): each suite in turn, timed, then the table.
define timed
	@mkdir -p $(PY_OUT) && : > $(2)
	@for t in $(1); do \
		start=$$(date +%s); \
		$(MAKE) --no-print-directory $$t || { python3 tests/test_times.py $(2) $$t; exit 1; }; \
		printf '%s\t%s\n' $$t $$(( $$(date +%s) - start )) >> $(2); \
	done
	@python3 tests/test_times.py $(2)
	@echo "make $(3): all suites passed"
endef

test: ## Lint, then every test in every language, then the demo; then where the time went
	$(call timed,$(TEST_SUITES),$(TEST_TIMES),test)

# The developer loop: lint and the fast suites of every language — the Rust core and CLI units, the
# Python tests on one SDK line (mcp 2.3), the Node tests — not the second SDK line, the agent
# frameworks, the hosts, packaging or the demo (`make test` runs those).
CHECK_SUITES = lint check-rust check-python test-node
check: ## The developer loop: lint and the fast suites of each language (make test runs everything)
	$(call timed,$(CHECK_SUITES),$(PY_OUT)/check-times.tsv,check)

check-rust: $(PY_OUT)/venv-mcp2/.requirements
	$(CARGO) test -p mcplens --all-features
	$(CARGO) test -p mcplens-cli --lib

check-python: build-python node-install $(PY_OUT)/venv-mcp2/.requirements $(PY_OUT)/venv-bench/.requirements
	$(PY_OUT)/venv-mcp2/bin/pip install $(PY_PIP) --no-deps --force-reinstall $(PY_WHEEL)
	cd $(PY_DIR) && MCPLENS_REQUIRE_NODE=1 ../$(PY_OUT)/venv-mcp2/bin/python -m pytest -q

test-readme: ## Every README code block is executed by a test
	python3 tests/readme_check.py

# The rmcp driver is also tested against Python mcp 2.3 and fastmcp 4 servers (their virtualenvs).
test-rust: $(PY_OUT)/venv-mcp2/.requirements $(PY_OUT)/venv-fastmcp4/.requirements ## Rust tests (core, shared vectors, rmcp integration, rmcp against Python servers)
	MCPLENS_REQUIRE_PYTHON_SERVERS=1 $(CARGO) test -p mcplens --all-features

lint: lint-rust lint-glue $(LINT_EXTRA) ## Format check and clippy (and each package's linters), the glue budget

lint-glue: ## Each binding's glue in code lines against a fifth of the core's (tests/glue_budget.py); no cycle between the core's modules, nor the CLI's (tests/module_cycles.py)
	python3 tests/glue_budget.py
	python3 tests/module_cycles.py
	python3 tests/module_cycles.py cli/src --cycles-only

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

# The demo runs the `mcplens` command of the wheel (as `pip install mcplens` gives it) and the
# packages as built for release; everything it needs is a file target, so a second `make demo`
# rebuilds nothing (`test-demo` checks it with `make -q`).
DEMO_VENV := .build/venv-mcp2
DEMO_CLI := $(CURDIR)/$(DEMO_VENV)/bin/mcplens
DEMO_ARTIFACTS = $(DEMO_VENV)/.wheel $(NODE_BUILT)

demo-build: $(DEMO_ARTIFACTS)

# Three jobs: the venvs and `npm ci` (network, disk) go on while cargo builds, and the wheel's
# cargo run starts as soon as maturin is installed (with two, it waited for `npm ci`); the wheel's
# and the addon's cargo runs still take turns (cargo's lock on the target directory).
demo: ## Build, then run the main job end to end: tracked Python server, Node agent, CLI, the events report
	@$(MAKE) --no-print-directory -j3 demo-build
	demo/run.sh $(CURDIR)/$(DEMO_VENV)/bin/python $(DEMO_CLI)
	@echo "make demo: $$(echo "$$(date +%s.%N) - $(MAKE_START)" | bc | xargs printf '%.0f') s (build and run)"

test-demo: demo-build ## The demo, with its output checked for the key lines; then a second build must have nothing to do
	demo/run.sh $(CURDIR)/$(DEMO_VENV)/bin/python $(DEMO_CLI) > .build/demo.out 2>&1 || { cat .build/demo.out; exit 1; }
	python3 demo/check_output.py .build/demo.out
	@$(MAKE) --no-print-directory -q $(DEMO_ARTIFACTS) \
		|| { echo "a second make demo would rebuild:"; $(MAKE) --no-print-directory -n $(DEMO_ARTIFACTS); exit 1; }
	@echo "test-demo: a second make demo rebuilds nothing"

clean: ## Remove build output
	$(CARGO) clean
