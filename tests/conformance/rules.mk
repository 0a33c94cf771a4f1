# External conformance (tests/conformance/), included by the top Makefile.
#
# `@modelcontextprotocol/conformance` (pinned, with the Node 22 it needs, both from npm) lives in
# tests/conformance/harness with its own package-lock.json: not part of the root npm workspace, and
# installed only by `npm ci` from that lockfile (re-run when the lockfile changes). The driver puts
# that Node 22 first on PATH for the harness only; the fixture servers and clients run on the
# project's Node and the Python venvs built by bindings-python/rules.mk, with the freshly built
# addon (node-install) and wheel (build-python). See tests/conformance/README.md.

NPM ?= npm
CONFORMANCE_DIR := tests/conformance
CONFORMANCE_HARNESS := $(CONFORMANCE_DIR)/harness
CONFORMANCE_STAMP := $(CONFORMANCE_HARNESS)/node_modules/.package-lock.json

.PHONY: test-conformance

$(CONFORMANCE_STAMP): $(CONFORMANCE_HARNESS)/package-lock.json $(CONFORMANCE_HARNESS)/package.json
	$(NPM) ci --prefix $(CONFORMANCE_HARNESS) --no-audit --no-fund --foreground-scripts
	touch $@

test-conformance: build-python $(PY_OUT)/venv-mcp1/.requirements $(PY_OUT)/venv-mcp2/.requirements node-install $(CONFORMANCE_STAMP) ## External conformance suite (pinned) vs our servers, plain and tracked; negative control; client mode
	@$(PY_INSTALL_WHEEL)
	$(PYTHON) $(CONFORMANCE_DIR)/run.py

TEST_EXTRA += test-conformance
