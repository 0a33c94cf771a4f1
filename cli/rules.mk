# The `mcplens` command line (cli/, package mcplens-cli). Included by the top Makefile.
# `cargo test` builds the crate's examples first, among them the stdio test server the tests spawn.
# The server-everything test runs when node_modules/@modelcontextprotocol/server-everything exists
# (`npm ci`); set MCPLENS_REQUIRE_EVERYTHING=1 to make its absence a failure. The protocol-era
# tests run the Python `mcp` 2.3 and 1.30 servers of .build/venv-mcp2 and .build/venv-mcp1.

.PHONY: test-cli

test-cli: $(PY_OUT)/venv-mcp1/.requirements $(PY_OUT)/venv-mcp2/.requirements ## CLI tests: the mcplens binary against real stdio and streamable HTTP servers
	MCPLENS_REQUIRE_PYTHON_SERVERS=1 $(CARGO) test -p mcplens-cli

TEST_EXTRA += test-cli
