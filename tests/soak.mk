# Soak test of tracking under exporter faults (core/tests/soak.rs), included by the top Makefile.
#
# One ignored test, alone in its test binary (it reads this process's RSS): a tracked rmcp server
# under steady load while the OTLP receiver goes down, answers slowly, returns 500s and 429s, and
# the JSONL path becomes unwritable (ENOTDIR, then ENOSPC). `make test` runs the short soak once,
# here (`cargo test` in test-rust only lists it as ignored); `make soak` runs it for SOAK_SECONDS.
# Load: SOAK_CLIENTS tracked connections (default 4) + 2 untracked control connections, each
# SOAK_RATE requests/s (default 50).

SOAK_SECONDS ?= 600
SOAK_CARGO = $(CARGO) test -p mcplens --all-features --test soak -- --ignored --nocapture --test-threads 1

.PHONY: soak test-soak

soak: ## Soak test: tracking under exporter faults for SOAK_SECONDS (default 600; not part of make test)
	SOAK_SECONDS=$(SOAK_SECONDS) $(SOAK_CARGO)

test-soak: ## Short soak (about 35 s of load): tracking under exporter faults
	$(SOAK_CARGO)

TEST_EXTRA += test-soak
