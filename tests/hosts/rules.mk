# Real hosts (tests/hosts/): Gemini CLI, pinned in tests/hosts/package-lock.json, runs headless and
# offline against tests/hosts/model_server.py (a scripted model endpoint on loopback), with
# `mcplens proxy` from each of its three commands in its MCP config; ended normally, by SIGTERM and
# by Ctrl-C. Included by the top Makefile; part of `make test` (about half a minute).

.PHONY: test-hosts

HOSTS_STAMP := tests/hosts/node_modules/.installed

# Install scripts are not run (the hosts run without them; nothing is fetched at install beyond
# the packages the lockfile names).
$(HOSTS_STAMP): tests/hosts/package-lock.json
	cd tests/hosts && $(NPM) ci --ignore-scripts --no-audit --no-fund
	touch $@

test-hosts: $(HOSTS_STAMP) $(PY_OUT)/venv-mcp2/.wheel node-install ## Real hosts (Gemini CLI) drive mcplens proxy from every command, offline: tools offered, called, results back, no process left
	$(CARGO) build -p mcplens-cli
	$(PY_OUT)/venv-mcp2/bin/python -m pytest -q -p no:cacheprovider tests/hosts

TEST_EXTRA += test-hosts
