# Node package (bindings-node/), included by the top Makefile.
#
# `npm ci` at the repository root installs the pinned tools (package-lock.json) and runs the
# workspace's `prepare`, which builds the napi addon (release) and compiles the facade (lib/ → dist/).

NPM ?= npm

.PHONY: node-install build-node test-node lint-node bench-node bench-node-addon bench-node-tracking

node-install: ## npm ci at the root: pinned tools, napi addon and facade built by `prepare`
	$(NPM) ci --no-audit --no-fund --foreground-scripts

build-node: node-install ## Build the Node package (napi addon + facade)

test-node: node-install $(PY_OUT)/venv-mcp2/.requirements ## Node tests: shared vectors, real SDK 1.x and v2 servers (memory, stdio, HTTP; both eras), a Python mcp 2.3 server, ESM + CJS, tracking (memory, stdio, HTTP, OTLP, MCPcat)
	@# In CI (a clean clone) the committed napi-generated loader and types must match the build.
	@if [ -n "$$CI" ] && git rev-parse --git-dir >/dev/null 2>&1; then \
		git diff --exit-code -- bindings-node/index.js bindings-node/index.d.ts \
		|| { echo "bindings-node/index.js or index.d.ts is stale: commit the files napi build generated"; exit 1; }; \
	fi
	cd bindings-node && $(NPM) run --silent test

lint-node: ## tsc --noEmit on the facade and its typed usage example
	@[ -x node_modules/.bin/tsc ] || $(NPM) ci --no-audit --no-fund --foreground-scripts
	cd bindings-node && $(NPM) run --silent lint

# The addon is rebuilt like the Rust benchmarks (fat LTO, one codegen unit: the workspace's bench
# profile); `napi build --profile bench` cannot find cargo's output for that profile, so the release
# profile is overridden for this build only.
bench-node-addon:
	@[ -x node_modules/.bin/napi ] || $(NPM) ci --no-audit --no-fund --foreground-scripts
	cd bindings-node && CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
		$(NPM) exec -- napi build --platform --release && $(NPM) exec -- tsc -p tsconfig.build.json

bench-node: bench-node-addon ## Node benchmark: bounded traversal vs the SDK's listResourceTemplates loop (memory, stdio)
	cd bindings-node && node bench/discovery.mjs

bench-node-tracking: bench-node-addon ## Node tracking benchmark: hot-path cost wrapped vs bare; tools/call, resources/read p50/p99 untracked vs mcplens vs mcpcat
	cd bindings-node && node bench/tracking.mjs

BUILD_EXTRA += build-node
TEST_EXTRA += test-node
LINT_EXTRA += lint-node
BENCH_EXTRA += bench-node bench-node-tracking
