# The host-lifecycle suite (tests/lifecycle/), included by the top Makefile: `mcplens proxy` from
# each of its three commands — the Rust binary (debug), the wheel's `mcplens` (in venv-mcp2), the
# npm package's bin/mcplens.cjs — spawned as a host spawns a server and ended as Codex, Claude
# Code, Gemini CLI and opencode end one; a server that logs on stderr, one with a tool named like
# the proxy's, one answering past the size bound, one that never answers, one waiting on a request
# to the host (server-everything, from `npm ci`).

.PHONY: test-lifecycle

test-lifecycle: $(PY_OUT)/venv-mcp2/.wheel node-install ## Host-lifecycle suite: the proxy from every command, ended as real hosts end it
	$(CARGO) build -p mcplens-cli
	$(PY_OUT)/venv-mcp2/bin/python -m pytest -q -p no:cacheprovider tests/lifecycle

TEST_EXTRA += test-lifecycle
