# Node package (bindings-node/), included by the top Makefile.
#
# `npm ci --ignore-scripts` at the repository root installs the pinned tools (package-lock.json);
# then the napi addon (release, like the wheel: one build of the dependencies for both) and the
# facade (lib/ → dist/) are built here, each only when a source it is made of changed. (The
# package's `prepare` script does the same for a plain `npm ci`/`npm install`.)

NPM ?= npm
NODE_STAMP := node_modules/.package-lock.json
NODE_ADDON := bindings-node/mcplens.linux-x64-gnu.node
NODE_FACADE := bindings-node/dist/index.js
NODE_SOURCES := $(RUST_SOURCES) $(wildcard bindings-node/src/*.rs bindings-node/src/*/*.rs) bindings-node/Cargo.toml bindings-node/build.rs
NODE_BUILT := $(NODE_ADDON) $(NODE_FACADE)

.PHONY: node-install build-node test-node lint-node bench-node bench-node-addon bench-node-tracking

$(NODE_STAMP): package-lock.json package.json bindings-node/package.json
	$(NPM) ci --no-audit --no-fund --ignore-scripts
	touch $@

# napi also rewrites the loader and the types it generates (bindings-node/native.js, native.d.ts:
# not index.js, the name of the facade's entry, dist/index.js).
$(NODE_ADDON): $(NODE_SOURCES) | $(NODE_STAMP)
	cd bindings-node && $(NPM) exec -- napi build --platform --release --js native.js --dts native.d.ts
	touch $@

$(NODE_FACADE): $(wildcard bindings-node/lib/*.ts bindings-node/lib/*.mts) bindings-node/tsconfig.build.json $(NODE_ADDON) | $(NODE_STAMP)
	cd bindings-node && $(NPM) exec -- tsc -p tsconfig.build.json
	touch $@

node-install: $(NODE_BUILT) ## npm ci at the root (pinned tools), then the napi addon and the facade

build-node: node-install ## Build the Node package (napi addon + facade)

test-node: node-install $(PY_OUT)/venv-mcp2/.requirements $(PY_OUT)/venv-fastmcp4/.requirements ## Node tests: shared vectors, real SDK 1.x and v2 servers (memory, stdio, HTTP; both eras), Python mcp 2.3 and fastmcp 4 servers, ESM + CJS, tracking (memory, stdio, HTTP, OTLP, MCPcat)
	@# In CI (a clean clone) the committed napi-generated loader and types must match the build.
	@if [ -n "$$CI" ] && git rev-parse --git-dir >/dev/null 2>&1; then \
		git diff --exit-code -- bindings-node/native.js bindings-node/native.d.ts \
		|| { echo "bindings-node/native.js or native.d.ts is stale: commit the files napi build generated"; exit 1; }; \
	fi
	cd bindings-node && $(NPM) run --silent test

# The tools come from $(NODE_STAMP), newer than package-lock.json: a stale node_modules (say, after
# a dependency was added) is installed again, never linted with.
lint-node: $(NODE_STAMP) ## tsc --noEmit on the facade and its typed usage example
	cd bindings-node && $(NPM) run --silent lint

# The addon is rebuilt as the published one is (RELEASE_LTO: fat LTO, one codegen unit), in the
# benchmarks' target directory (BENCH_TARGET, the top Makefile); `napi build --profile bench` cannot
# find cargo's output for that profile, so the release profile is overridden for this build only.
bench-node-addon: $(NODE_STAMP)
	cd bindings-node && $(RELEASE_LTO) $(NPM) exec -- napi build --platform --release --target-dir $(BENCH_TARGET) \
		--js native.js --dts native.d.ts && $(NPM) exec -- tsc -p tsconfig.build.json

bench-node: bench-node-addon ## Node benchmark: bounded traversal vs the SDK's listResourceTemplates loop (memory, stdio)
	cd bindings-node && node bench/discovery.mjs

bench-node-tracking: bench-node-addon ## Node tracking benchmark: hot-path cost wrapped vs bare; tools/call, resources/read p50/p99 untracked vs mcplens vs agentcat, mcpcat and @posthog/mcp
	cd bindings-node && node bench/tracking.mjs

BUILD_EXTRA += build-node
TEST_EXTRA += test-node
LINT_EXTRA += lint-node
BENCH_EXTRA += bench-node bench-node-tracking
