# OTLP against a real OpenTelemetry backend: Arize Phoenix (tests/phoenix/requirements.txt, its own
# venv .build/venv-phoenix), started by the test on loopback with embedded SQLite storage. The
# tracked server and the test run in .build/venv-mcp1 (mcp 1.30.0, pytest, the mcplens wheel).
# Included by the top Makefile.

PHOENIX_VENV := .build/venv-phoenix

.PHONY: test-phoenix

$(PHOENIX_VENV)/.requirements: tests/phoenix/requirements.txt
	rm -rf $(PHOENIX_VENV)
	$(PYTHON) -m venv $(PHOENIX_VENV)
	$(PHOENIX_VENV)/bin/pip install $(PY_PIP) --requirement $<
	touch $@

test-phoenix: build-python $(PY_OUT)/venv-mcp1/.requirements $(PHOENIX_VENV)/.requirements ## OTLP spans from a tracked Python server, queried back from Arize Phoenix
	$(PY_OUT)/venv-mcp1/bin/pip install $(PY_PIP) --no-deps --force-reinstall $(PY_WHEEL)
	cd tests/phoenix && PHOENIX_PYTHON=$(CURDIR)/$(PHOENIX_VENV)/bin/python \
		$(CURDIR)/$(PY_OUT)/venv-mcp1/bin/python -m pytest -p no:cacheprovider test_phoenix.py

TEST_EXTRA += test-phoenix
