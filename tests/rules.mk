# Reliability suite, included by the top Makefile.
#
# - Fuzzing (core/fuzz, cargo-fuzz; not part of `make test`): `make fuzz` runs every target for
#   FUZZ_SECONDS (default 60) each, growing core/fuzz/corpus/<target> (not committed) from the
#   committed seeds in core/fuzz/seeds/<target>. cargo-fuzz is installed into .build/cargo on first
#   use; the stable toolchain runs it with RUSTC_BOOTSTRAP=1 (it needs -Zsanitizer). A crash lands in
#   core/fuzz/artifacts/<target>/: minimize it, commit it under core/fuzz/regressions/<target>/.
# - `make test` already covers the rest through each language's suite: `cargo test` replays the
#   committed seeds and reproducers (core/tests/rules/fuzz_regressions.rs), runs the proptest properties
#   (core/tests/rules/proptest_*.rs) and the Rust hostile-server matrix (core/tests/drivers/hostile_matrix.rs);
#   pytest and node --test run the Python and Node matrices. `test-reliability` then prints the
#   matrix table (case × language) from their result files in .build/hostile/.

FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= page pager_sequence sanitize uri_template template tracking_event proxy_sequence complete_answer
FUZZ_FLAGS ?= -max_len=8192 -timeout=20 -rss_limit_mb=3072
# A separate target directory: sanitizer builds share nothing with the normal ones.
FUZZ_TARGET_DIR ?= $(CARGO_TARGET_DIR)/fuzz
CARGO_FUZZ := .build/cargo/bin/cargo-fuzz

.PHONY: fuzz test-reliability

$(CARGO_FUZZ):
	$(CARGO) install cargo-fuzz --locked --root .build/cargo

fuzz: $(CARGO_FUZZ) ## Fuzz every core target for FUZZ_SECONDS each (default 60; not part of make test)
	@for t in $(FUZZ_TARGETS); do \
		echo "== fuzz $$t for $(FUZZ_SECONDS) s"; \
		mkdir -p core/fuzz/corpus/$$t; \
		( cd core && PATH="$(CURDIR)/.build/cargo/bin:$$PATH" RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="$(FUZZ_TARGET_DIR)" \
			cargo fuzz run -O $$t fuzz/corpus/$$t fuzz/seeds/$$t -- -max_total_time=$(FUZZ_SECONDS) $(FUZZ_FLAGS) ) \
			|| exit 1; \
	done

test-reliability: ## Print the hostile-server matrix (case × language) recorded by the test suites
	python3 tests/servers/hostile/summary.py

TEST_EXTRA += test-reliability
