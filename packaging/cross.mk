# Cross-built release artifacts (`make dist-all`) and their check (`make check-dist-all`), included
# by the top Makefile. Neither is part of `make test`: each target is a release build of the whole
# dependency tree (minutes on two cores).
#
#   cross-tools     .build/venv-cross: zig, cargo-zigbuild, maturin, auditwheel, pinned
#                   (packaging/requirements-cross.txt); `rustup target add` of every target
#                   (idempotent: a no-op for a target already installed)
#   dist-all        `make dist` (the host's wheel and platform package, the sdist, the crates), then
#                   for each target of CROSS_TARGETS the abi3 wheel and the npm platform package
#                   (packaging/dist_target.py: one cargo target directory and one set of flags for
#                   both, so the addon reuses the wheel's dependency build), then the main npm
#                   package again, listing every platform package dist/ holds
#   check-dist-all  every wheel and platform package in dist/ (packaging/check_dist_all.py)
#
# Each target writes only its own files into dist/ (its wheel's platform tag, its platform
# package), as `make dist` does for the host's; the x86_64 glibc slot is shared: `dist-all` builds
# it against glibc 2.17 (manylinux_2_17), `make dist` natively (manylinux_2_34), the later one wins.

CROSS_VENV := $(PY_OUT)/venv-cross
CROSS_TARGETS := aarch64-unknown-linux-gnu x86_64-unknown-linux-musl aarch64-unknown-linux-musl \
	aarch64-apple-darwin x86_64-apple-darwin x86_64-pc-windows-gnu x86_64-unknown-linux-gnu
# A stamp per target in dist/: a target is built again only when a source it is made of changed.
DIST_TARGETS := $(CROSS_TARGETS:%=$(DIST)/.target-%)

.PHONY: cross-tools cross-rustup dist-all check-dist-all

$(CROSS_VENV)/.requirements: packaging/requirements-cross.txt
	rm -rf $(CROSS_VENV)
	$(PYTHON) -m venv $(CROSS_VENV)
	$(CROSS_VENV)/bin/pip install $(PY_PIP) --requirement $<
	touch $@

cross-rustup:
	rustup target add $(CROSS_TARGETS)

cross-tools: $(CROSS_VENV)/.requirements cross-rustup ## Cross-build tools: zig, cargo-zigbuild, maturin (pinned, .build/venv-cross) and the rustup targets

$(DIST)/.target-%: $(PY_SOURCES) $(NODE_SOURCES) packaging/dist_target.py $(VERSION_PLACES) \
		$(wildcard bindings-node/npm/*/package.json) $(CROSS_VENV)/.requirements | cross-rustup
	python3 packaging/version.py check
	$(CROSS_VENV)/bin/python packaging/dist_target.py $* $(DIST)
	touch $@

# Windows: rustc links the wheel's python3.dll by raw-dylib with mingw's dlltool, and the addon's
# stand-in libnode import library is made with it (Debian binutils-mingw-w64-x86-64).
$(DIST)/.target-x86_64-pc-windows-gnu: | platform-debs

# The x86_64 glibc slot is make dist's too: built after it (with -j as well), it replaces the host's.
$(DIST)/.target-x86_64-unknown-linux-gnu: | $(DIST_PYTHON) $(DIST_NODE)

dist-all: dist $(DIST_TARGETS) ## make dist, then the wheel and npm platform package of every cross target (zig; not in make test)
	node packaging/pack_npm.mjs "$$(python3 packaging/version.py)" $(DIST) $(PY_OUT)/npm-stage
	$(CROSS_VENV)/bin/python packaging/check_dist_all.py $(DIST)

check-dist-all: $(CROSS_VENV)/.requirements ## Check every wheel and npm platform package in dist/: format, arch, entry symbol, linked libraries, tags, macOS minimum
	$(CROSS_VENV)/bin/python packaging/check_dist_all.py $(DIST)
