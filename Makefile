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

.PHONY: help build test test-rust lint lint-rust fmt bench bench-rust demo clean

help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

build: $(BUILD_EXTRA) ## Build the workspace (debug)
	$(CARGO) build --workspace --all-features

test: lint test-rust $(TEST_EXTRA) ## Lint, then every test in every language
	@echo "make test: all suites passed"

test-rust: ## Rust tests (core, shared vectors, rmcp integration)
	$(CARGO) test -p mcplens --all-features

lint: lint-rust $(LINT_EXTRA) ## Format check and clippy (and each package's linters)

lint-rust:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --all-features -- -D warnings

fmt: ## Format the Rust code
	$(CARGO) fmt --all

bench: bench-rust $(BENCH_EXTRA) ## Benchmarks (release; prints µs per page, MB/s and ratios)

bench-rust:
	$(CARGO) bench -p mcplens --all-features

demo: ## Build, then run the discovery demo end to end on embedded defaults
	$(CARGO) run -q -p mcplens --example discover --all-features

clean: ## Remove build output
	$(CARGO) clean
