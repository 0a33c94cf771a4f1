# OTLP against a real OpenTelemetry backend: Arize Phoenix (tests/phoenix/requirements.txt, its own
# venv .build/venv-phoenix), started by the test on loopback with embedded SQLite storage. The
# tracked server and the test run in .build/venv-mcp1 (mcp 1.30.0, pytest, the mcplens wheel); the
# mcp 2.x server whose SDK exports its own spans too runs in .build/venv-phoenix-mcp2
# (tests/phoenix/requirements-mcp2.txt and the wheel). Included by the top Makefile.

PHOENIX_VENV := .build/venv-phoenix
PHOENIX_MCP2_VENV := .build/venv-phoenix-mcp2

.PHONY: test-phoenix

$(PHOENIX_VENV)/.requirements: tests/phoenix/requirements.txt
	rm -rf $(PHOENIX_VENV)
	$(PYTHON) -m venv $(PHOENIX_VENV)
	$(PHOENIX_VENV)/bin/pip install $(PY_PIP) --requirement $<
	touch $@

$(PHOENIX_MCP2_VENV)/.requirements: tests/phoenix/requirements-mcp2.txt
	rm -rf $(PHOENIX_MCP2_VENV)
	$(PYTHON) -m venv $(PHOENIX_MCP2_VENV)
	$(PHOENIX_MCP2_VENV)/bin/pip install $(PY_PIP) --requirement $<
	touch $@

test-phoenix: build-python $(PY_OUT)/venv-mcp1/.requirements $(PHOENIX_VENV)/.requirements $(PHOENIX_MCP2_VENV)/.requirements ## OTLP spans from tracked Python servers (mcp 1.x; mcp 2.x with its SDK's own spans), queried back from Arize Phoenix
	$(PY_OUT)/venv-mcp1/bin/pip install $(PY_PIP) --no-deps --force-reinstall $(PY_WHEEL)
	$(PHOENIX_MCP2_VENV)/bin/pip install $(PY_PIP) --no-deps --force-reinstall $(PY_WHEEL)
	cd tests/phoenix && PHOENIX_PYTHON=$(CURDIR)/$(PHOENIX_VENV)/bin/python \
		PHOENIX_MCP2_PYTHON=$(CURDIR)/$(PHOENIX_MCP2_VENV)/bin/python \
		$(CURDIR)/$(PY_OUT)/venv-mcp1/bin/python -m pytest -p no:cacheprovider test_phoenix.py

TEST_EXTRA += test-phoenix
