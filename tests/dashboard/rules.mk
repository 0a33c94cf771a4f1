# The events report in a real browser, and its benchmark. Included by the top Makefile.
#
# test-dashboard: Debian's Chromium (installed with apt when /usr/bin/chromium is missing; CI runs
# as root) driven by playwright-core (pinned in the root package.json, `npm ci`) opens the report
# and the live page of `mcplens events serve`; screenshots in .build/dashboard/.
# bench-report: time and peak memory of `mcplens events report` on 1,000,000 events (release).

CHROMIUM := /usr/bin/chromium

.PHONY: test-dashboard bench-report

$(CHROMIUM):
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium

# The `mcplens` command of the wheel (the one `make demo` runs): no separate debug build of the CLI.
test-dashboard: node-install $(PY_OUT)/venv-mcp2/.wheel $(CHROMIUM) ## The events report and the live page in headless Chromium (screenshots in .build/dashboard/)
	MCPLENS_CLI=$(CURDIR)/$(PY_OUT)/venv-mcp2/bin/mcplens node --test tests/dashboard/browser.test.mjs

bench-report: ## events report on 1,000,000 events: time and peak memory (the published build, RELEASE_LTO; beside events summary)
	$(RELEASE_LTO) CARGO_TARGET_DIR=$(BENCH_TARGET) $(CARGO) build -q --release -p mcplens-cli
	$(PYTHON) tests/dashboard/bench_report.py $(BENCH_TARGET)/release/mcplens

TEST_EXTRA += test-dashboard
BENCH_EXTRA += bench-report
