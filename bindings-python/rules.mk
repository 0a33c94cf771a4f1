# Python package (bindings-python/), included by the top Makefile.
#
# Everything lives under .build/ (gitignored):
#   venv-build/   maturin and auditwheel, pinned (requirements-build.txt)
#   dist/         the wheel, built once by `maturin build --release` (for the host target, as the
#                 Node addon is, so both share one build of the dependencies); rebuilt only when a
#                 source it is made of changed
#   venv-fresh/   the wheel alone in a bare virtualenv: it imports and pages without the `mcp` SDK
#   venv-mcp1/    mcp 1.30.0 + pytest (requirements-mcp1.txt)
#   venv-mcp2/    mcp 2.3.0 + pytest (requirements-mcp2.txt), plus ruff and mypy (requirements-lint.txt)
#   venv-fastmcp2/ 3/ 4/  community fastmcp 2.14.7 and 3.4.11 on mcp 1.30.0, 4.2.3 on mcp 2.3.0
#                 (requirements-fastmcp<N>.txt): the fastmcp tests and the hostile matrix through
#                 fastmcp.Client; 4/ gets agentcat 2.1.0 for the benchmark (requirements-bench-fastmcp.txt)
#   venv-agents/  Pydantic AI 2.68.0, LangChain 1.5.2, OpenAI Agents 0.24.0 on mcp 2.3.0 and fastmcp
#                 4.2.3 (requirements-agents.txt; Python >= 3.11): the agent-framework adapters' tests,
#                 and mypy on them (requirements-lint.txt); venv-agents-mcp1/: the same frameworks on
#                 mcp 1.30.0 and fastmcp 3.4.11 (requirements-agents-mcp1.txt)

PYTHON ?= python3
PY_DIR := bindings-python
PY_OUT := .build
PY_PIP := --disable-pip-version-check --no-input --quiet
# A shell glob, expanded when a recipe runs (the one wheel $(PY_BUILT) leaves there): make's
# `$(wildcard)` reads a directory listing it cached before the wheel was built, and was empty on a
# fresh clone.
PY_WHEEL = $(PY_OUT)/dist/mcplens-*.whl
PY_BUILD_VENV := $(PY_OUT)/venv-build
MATURIN := $(PY_BUILD_VENV)/bin/maturin
# The wheel is made of the core, the CLI and this package (RUST_SOURCES: the top Makefile).
PY_SOURCES := $(RUST_SOURCES) $(wildcard $(PY_DIR)/src/*.rs $(PY_DIR)/python/mcplens/* $(PY_DIR)/python/mcplens/integrations/*) \
	$(PY_DIR)/Cargo.toml $(PY_DIR)/pyproject.toml $(PY_DIR)/README.md
PY_BUILT := $(PY_OUT)/dist/.built

PY_INSTALL_WHEEL = for v in 1 2; do $(PY_OUT)/venv-mcp$$v/bin/pip install $(PY_PIP) --no-deps --force-reinstall $(PY_WHEEL) || exit 1; done
PY_FASTMCP := 2 3 4
PY_FASTMCP_VENVS := $(PY_FASTMCP:%=$(PY_OUT)/venv-fastmcp%/.requirements)
PY_FASTMCP_TESTS := tests/test_fastmcp_client.py tests/test_fastmcp_tracking.py tests/test_hostile.py

.PHONY: build-python test-python test-python-agents lint-python bench-python

$(PY_BUILD_VENV)/.requirements: $(PY_DIR)/requirements-build.txt
	rm -rf $(PY_BUILD_VENV)
	$(PYTHON) -m venv $(PY_BUILD_VENV)
	$(PY_BUILD_VENV)/bin/pip install $(PY_PIP) --requirement $<
	touch $@

$(PY_BUILT): $(PY_SOURCES) $(PY_BUILD_VENV)/.requirements
	rm -rf $(PY_OUT)/dist
	$(MATURIN) build --release --target $(HOST_TARGET) --quiet --manifest-path $(PY_DIR)/Cargo.toml --out $(PY_OUT)/dist
	touch $@

# The wheel alone in a bare virtualenv: imports and pages without the `mcp` SDK.
$(PY_OUT)/venv-fresh/.smoke: $(PY_BUILT) $(PY_DIR)/tests/smoke.py
	rm -rf $(PY_OUT)/venv-fresh
	$(PYTHON) -m venv $(PY_OUT)/venv-fresh
	$(PY_OUT)/venv-fresh/bin/pip install $(PY_PIP) $(PY_WHEEL)
	cd $(PY_OUT) && venv-fresh/bin/python $(CURDIR)/$(PY_DIR)/tests/smoke.py
	touch $@

# The wheel installed in a test environment (for `make demo`; the test targets reinstall it).
$(PY_OUT)/venv-mcp%/.wheel: $(PY_BUILT) $(PY_OUT)/venv-mcp%/.requirements
	$(PY_OUT)/venv-mcp$*/bin/pip install $(PY_PIP) --no-deps --force-reinstall $(PY_WHEEL)
	touch $@

build-python: $(PY_OUT)/venv-fresh/.smoke ## Python: the abi3 wheel (maturin, release) in .build/dist, smoke-tested alone in a fresh venv

$(PY_OUT)/venv-%/.requirements: $(PY_DIR)/requirements-%.txt
	rm -rf $(PY_OUT)/venv-$*
	$(PYTHON) -m venv $(PY_OUT)/venv-$*
	$(PY_OUT)/venv-$*/bin/pip install $(PY_PIP) --requirement $<
	touch $@

$(PY_OUT)/venv-%/.lint-requirements: $(PY_DIR)/requirements-lint.txt $(PY_OUT)/venv-%/.requirements
	$(PY_OUT)/venv-$*/bin/pip install $(PY_PIP) --requirement $<
	touch $@

# node-install: the cross-language tests need the Node package, and must run (MCPLENS_REQUIRE_NODE).
# venv-bench: agentcat 2.1.0, whose own event body the agentcat exporter's is compared with.
test-python: build-python node-install $(PY_OUT)/venv-mcp1/.requirements $(PY_OUT)/venv-mcp2/.requirements $(PY_OUT)/venv-bench/.requirements $(PY_FASTMCP_VENVS) ## Python tests on mcp 1.30.0 and 2.3.0, and community fastmcp 2.x/3.x/4.x
	@$(PY_INSTALL_WHEEL)
	@for v in $(PY_FASTMCP); do $(PY_OUT)/venv-fastmcp$$v/bin/pip install $(PY_PIP) --no-deps --force-reinstall $(PY_WHEEL) || exit 1; done
	@echo "== pytest, mcp 1.30.0"
	cd $(PY_DIR) && MCPLENS_REQUIRE_NODE=1 ../$(PY_OUT)/venv-mcp1/bin/python -m pytest
	@echo "== pytest, mcp 2.3.0"
	cd $(PY_DIR) && MCPLENS_REQUIRE_NODE=1 ../$(PY_OUT)/venv-mcp2/bin/python -m pytest
	@for v in $(PY_FASTMCP); do echo "== pytest, fastmcp $$v.x"; (cd $(PY_DIR) && ../$(PY_OUT)/venv-fastmcp$$v/bin/python -m pytest $(PY_FASTMCP_TESTS)) || exit 1; done

# The agent-framework adapters import their frameworks: mypy checks them where those are installed.
PY_ADAPTERS := $(PY_DIR)/python/mcplens/integrations

lint-python: build-python $(PY_OUT)/venv-mcp2/.lint-requirements $(PY_OUT)/venv-agents/.lint-requirements ## Python: ruff, stubtest of _core.pyi, mypy --strict on the glue and the adapters
	$(PY_OUT)/venv-mcp2/bin/ruff check $(PY_DIR)
	$(PY_OUT)/venv-mcp2/bin/ruff format --check $(PY_DIR)
	$(PY_OUT)/venv-mcp2/bin/pip install $(PY_PIP) --no-deps --force-reinstall $(PY_WHEEL)
	cd $(PY_OUT) && venv-mcp2/bin/python -m mypy.stubtest mcplens._core
	$(PY_OUT)/venv-mcp2/bin/python -m mypy --strict --exclude '$(PY_ADAPTERS)/.+[.]py' $(PY_DIR)/python/mcplens
	$(PY_OUT)/venv-agents/bin/python -m mypy --strict $(PY_ADAPTERS)

# The adapters in each framework's own agent loop, with its offline model, against real MCP servers;
# the README's agent-framework examples run here too.
PY_AGENTS := agents agents-mcp1
test-python-agents: build-python $(PY_AGENTS:%=$(PY_OUT)/venv-%/.requirements) ## Python: the Pydantic AI, LangChain and OpenAI Agents adapters in their own agent loops (offline models), on mcp 2.x and 1.x
	@for v in $(PY_AGENTS); do $(PY_OUT)/venv-$$v/bin/pip install $(PY_PIP) --no-deps --force-reinstall $(PY_WHEEL) || exit 1; done
	@for v in $(PY_AGENTS); do echo "== pytest, $$v"; (cd $(PY_DIR) && ../$(PY_OUT)/venv-$$v/bin/python -m pytest tests/test_agents_*.py) || exit 1; done

# The benchmarks measure the build users get: the published artifacts are built with RELEASE_LTO
# (the top Makefile; the release workflow sets it), `make test`'s with plain `--release` (fat LTO
# took a build of the CLI from about 1 to 3.4 minutes on two cores). The bench wheel is built with
# it in a target directory of its own (BENCH_TARGET), so neither build undoes the other's
# dependencies; each bench target installs it where it measures.
PY_BENCH_WHEEL = $(PY_OUT)/bench-dist/mcplens-*.whl
PY_BENCH_BUILT := $(PY_OUT)/bench-dist/.built
PY_INSTALL_BENCH_WHEEL = for v in $(1); do $(PY_OUT)/venv-$$v/bin/pip install $(PY_PIP) --no-deps --force-reinstall $(PY_BENCH_WHEEL) || exit 1; done

$(PY_BENCH_BUILT): $(PY_SOURCES) $(PY_BUILD_VENV)/.requirements
	rm -rf $(PY_OUT)/bench-dist
	$(RELEASE_LTO) CARGO_TARGET_DIR=$(BENCH_TARGET) $(MATURIN) build --release --target $(HOST_TARGET) --quiet \
		--manifest-path $(PY_DIR)/Cargo.toml --out $(PY_OUT)/bench-dist
	touch $@

bench-python: $(PY_BENCH_BUILT) $(PY_OUT)/venv-mcp1/.requirements $(PY_OUT)/venv-mcp2/.requirements ## Python: mcplens vs the SDK's list loop (S and ~1 MB workloads, memory and stdio, mcp 1.x and 2.x)
	@$(call PY_INSTALL_BENCH_WHEEL,mcp1 mcp2)
	@for v in 1 2; do $(PY_OUT)/venv-mcp$$v/bin/python $(PY_DIR)/bench/bench_discovery.py || exit 1; done

BUILD_EXTRA += build-python
TEST_EXTRA += test-python test-python-agents
LINT_EXTRA += lint-python
BENCH_EXTRA += bench-python

# Server tracking benchmark: .build/venv-bench-mcp1 (mcp 1.30.0) and .build/venv-bench (mcp 2.3.0),
# each with agentcat 2.1.0 and posthog 7.91.1: the hot path at the handler, untracked vs mcplens (vs
# agentcat on 2.x) end to end, and bench_incumbents.py (the SDK's high-level server tracked by
# mcplens, agentcat and posthog.mcp, interleaved); .build/venv-fastmcp4 (a fastmcp 4.2.3 server,
# untracked vs mcplens vs agentcat 2.1.0, in memory and over stdio).
.PHONY: bench-python-tracking
$(PY_OUT)/venv-fastmcp4/.bench-requirements: $(PY_DIR)/requirements-bench-fastmcp.txt $(PY_OUT)/venv-fastmcp4/.requirements
	$(PY_OUT)/venv-fastmcp4/bin/pip install $(PY_PIP) --requirement $<
	touch $@

bench-python-tracking: $(PY_BENCH_BUILT) $(PY_OUT)/venv-bench-mcp1/.requirements $(PY_OUT)/venv-bench/.requirements $(PY_OUT)/venv-fastmcp4/.bench-requirements ## Python: tracking cost at the handler, end to end vs agentcat and posthog.mcp (SDK and fastmcp servers), RSS with the exporter down
	@$(call PY_INSTALL_BENCH_WHEEL,bench-mcp1 bench fastmcp4)
	@for v in bench-mcp1 bench; do $(PY_OUT)/venv-$$v/bin/python $(PY_DIR)/bench/bench_tracking.py || exit 1; done
	@for v in bench-mcp1 bench; do $(PY_OUT)/venv-$$v/bin/python $(PY_DIR)/bench/bench_incumbents.py || exit 1; done
	$(PY_OUT)/venv-fastmcp4/bin/python $(PY_DIR)/bench/bench_fastmcp.py

BENCH_EXTRA += bench-python-tracking

# mcplens proxy (the wheel's command): added p50 per relayed request over stdio vs the direct
# connection, with and without tracking, and the proxy's peak RSS.
.PHONY: bench-proxy
bench-proxy: $(PY_BENCH_BUILT) $(PY_OUT)/venv-mcp2/.requirements ## mcplens proxy: added p50 per relayed tools/call over stdio (vs direct, one run), peak RSS
	@$(call PY_INSTALL_BENCH_WHEEL,mcp2)
	$(RELEASE_LTO) CARGO_TARGET_DIR=$(BENCH_TARGET) cargo build --release --quiet -p mcplens-cli --example bare-relay
	MCPLENS_BENCH_BARE_RELAY=$(BENCH_TARGET)/release/examples/bare-relay $(PY_OUT)/venv-mcp2/bin/python $(PY_DIR)/bench/bench_proxy.py

BENCH_EXTRA += bench-proxy
