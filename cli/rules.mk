# The `mcplens` command line (cli/, package mcplens-cli). Included by the top Makefile.
# `cargo test` builds the crate's examples first, among them the stdio test server the tests spawn.
# The server-everything test runs when node_modules/@modelcontextprotocol/server-everything exists
# (`npm ci`); set MCPLENS_REQUIRE_EVERYTHING=1 to make its absence a failure.

.PHONY: test-cli

test-cli: ## CLI tests: the mcplens binary against real stdio and streamable HTTP servers
	$(CARGO) test -p mcplens-cli

TEST_EXTRA += test-cli
