#!/usr/bin/env python3
"""maturin's `cargo` in `make dist-all` (packaging/dist_target.py sets CARGO to this file).

maturin runs `$CARGO rustc --target T …`; this runs it as `cargo-zigbuild rustc --target T.SUFFIX …`,
the command the addon is built with, so the wheel's cargo run links through the same zig wrappers.
cargo hashes the target's linker into every unit's fingerprint: with `maturin --zig` (its own
wrappers, under another path) the addon's run compiled every dependency a second time.

    DIST_TARGET=T DIST_ZIG_TARGET=T.2.17 DIST_CARGO_ZIGBUILD=…/cargo-zigbuild CARGO=zig_cargo.py maturin …
"""

import os
import sys

target, zig_target = os.environ["DIST_TARGET"], os.environ["DIST_ZIG_TARGET"]
zigbuild = os.environ["DIST_CARGO_ZIGBUILD"]
args = [zig_target if a == target else a for a in sys.argv[1:]]
os.execv(zigbuild, [zigbuild, *args])
