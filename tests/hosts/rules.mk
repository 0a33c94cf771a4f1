# Real hosts (tests/hosts/): Gemini CLI, Codex CLI and opencode, pinned in
# tests/hosts/package-lock.json, run headless and offline against tests/hosts/model_server.py (a
# scripted model endpoint on loopback speaking each one's protocol), with `mcplens proxy` from each
# of its three commands in their MCP config; ended normally, by SIGTERM and by Ctrl-C. Included by
# the top Makefile; part of `make test` (about a minute and a half, plus the first install).

.PHONY: test-hosts

HOSTS_STAMP := tests/hosts/node_modules/.installed

# Install scripts are not run (the hosts run without them; opencode is its Linux x64 binary
# package: nothing is fetched at install beyond the packages the lockfile names).
$(HOSTS_STAMP): tests/hosts/package-lock.json
	cd tests/hosts && $(NPM) ci --ignore-scripts --no-audit --no-fund
	touch $@

test-hosts: $(HOSTS_STAMP) $(PY_OUT)/venv-mcp2/.wheel node-install ## Real hosts (Gemini CLI, Codex CLI, opencode) drive mcplens proxy from every command, offline: tools offered, called, results back, no process left
	$(CARGO) build -p mcplens-cli
	$(PY_OUT)/venv-mcp2/bin/python -m pytest -q -p no:cacheprovider tests/hosts

TEST_EXTRA += test-hosts
