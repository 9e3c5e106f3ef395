#!/usr/bin/env bash
# Makes this machine able to build and test replayground, then writes the
# environment the other scripts load ($REPLAYGROUND_CACHE/env.sh).
#
# Idempotent: every step first checks whether its result is already there, so a
# second run on a ready machine does nothing and says so in a few seconds.
#
# Steps:
#   1. Debian packages: Chromium + ChromeDriver, clang/lld for compiling
#      SQLite's C to wasm32, brotli (module size report).
#   2. A Rust toolchain with the wasm32-unknown-unknown standard library:
#      the active rustc if it has it; else `rustup target add` with a short
#      timeout; else Debian's rustc-web whose std is built once from
#      rust-web-src into the cache (see ../shared/TOOLCHAIN.md).
#   3. wasm-bindgen-cli at exactly the wasm-bindgen version in Cargo.lock,
#      wasm-pack, cargo-fuzz, and binaryen's wasm-opt (from npm, pinned in scripts/node:
#      Debian bookworm's binaryen 108 breaks wasm-bindgen's externref table),
#      all installed into the cache.
#   4. Node packages for the end-to-end tests (tests/e2e, from its lock file).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

START=$(date +%s)
DID_WORK=0
log() { printf 'setup: %s\n' "$*" >&2; }
work() { DID_WORK=1; log "$*"; }
die() { log "error: $*"; exit 1; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
mkdir -p "$REPLAYGROUND_CACHE"

# The newest LLVM that Debian's rustc-web 1.96 was built against; its clang and
# lld compile and link for wasm32.
LLVM=22

# ---------------------------------------------------------------- 1. packages
# postgresql: the second engine's server (tests start throwaway clusters of it).
APT_PACKAGES=(chromium chromium-driver firefox-esr "clang-$LLVM" "lld-$LLVM" "llvm-$LLVM" brotli postgresql)
APT_UPDATED=0
apt_install() {
    local missing=()
    local pkg
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$pkg")
        fi
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get to install them"
    work "installing Debian packages: ${missing[*]}"
    if [ "$APT_UPDATED" -eq 0 ]; then
        $SUDO apt-get update -qq >&2
        APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >&2
}
apt_install "${APT_PACKAGES[@]}"

# ---------------------------------------------------------------- 2. toolchain
# Unset what an earlier load of env.sh may have put in this shell, so that the
# active toolchain below is the user's own.
unset RUSTC CARGO
has_wasm_std() { # $1: a rustc binary (with its environment already set)
    local sysroot
    sysroot=$("$@" --print sysroot 2>/dev/null) || return 1
    compgen -G "$sysroot/lib/rustlib/wasm32-unknown-unknown/lib/libstd-*.rlib" >/dev/null
}

DEB_RUST="$REPLAYGROUND_CACHE/rust-debian"
DEB_LIB="$DEB_RUST/usr/lib/x86_64-linux-gnu"
# Build a wasm32 std for Debian's rustc-web from its own source package, once.
build_debian_toolchain() {
    apt_install libllvm$LLVM libgit2-1.5
    local version
    version=$(apt-cache policy libstd-rust-web-1.96 | awk '/Candidate:/ {print $2}')
    [ -n "$version" ] && [ "$version" != "(none)" ] || die "Debian offers no libstd-rust-web-1.96"
    work "building Debian rustc-web $version with a wasm32 std into $DEB_RUST (about a minute)"
    rm -rf "$DEB_RUST" "$REPLAYGROUND_CACHE/debs" "$REPLAYGROUND_CACHE/std-build"
    mkdir -p "$REPLAYGROUND_CACHE/debs" "$DEB_RUST"
    (
        cd "$REPLAYGROUND_CACHE/debs"
        local p
        for p in rustc-web libstd-rust-web-1.96 libstd-rust-web-dev rust-web-src cargo-web rust-web-clippy; do
            apt-get download -qq -o APT::Sandbox::User=root "$p=$version" >&2
        done
        for p in ./*.deb; do dpkg -x "$p" "$DEB_RUST"; done
    )
    local std_build="$REPLAYGROUND_CACHE/std-build"
    mkdir -p "$std_build/src"
    printf '[package]\nname = "std-build"\nversion = "0.0.0"\nedition = "2021"\n[lib]\npath = "src/lib.rs"\n' >"$std_build/Cargo.toml"
    : >"$std_build/src/lib.rs"
    (
        cd "$std_build"
        PATH="$DEB_RUST/usr/bin:$PATH" LD_LIBRARY_PATH="$DEB_LIB" RUSTC_BOOTSTRAP=1 \
            RUSTC="$DEB_RUST/usr/bin/rustc" \
            CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER="wasm-ld-$LLVM" \
            "$DEB_RUST/usr/bin/cargo" build -q --release --target wasm32-unknown-unknown \
            -Z build-std=std,panic_abort,test >&2
    )
    local dest="$DEB_RUST/usr/lib/rustlib/wasm32-unknown-unknown/lib"
    mkdir -p "$dest"
    find "$std_build/target/wasm32-unknown-unknown/release/deps" -name '*.rlib' \
        ! -name 'libstd_build-*' -exec cp {} "$dest/" \;
    rm -rf "$std_build" "$REPLAYGROUND_CACHE/debs"
    LD_LIBRARY_PATH="$DEB_LIB" has_wasm_std "$DEB_RUST/usr/bin/rustc" || die "the wasm32 std build did not produce libstd"
    echo "$version" >"$DEB_RUST/.ready"
}

debian_ready() { [ -f "$DEB_RUST/.ready" ] && LD_LIBRARY_PATH="$DEB_LIB" has_wasm_std "$DEB_RUST/usr/bin/rustc"; }

# REPLAYGROUND_TOOLCHAIN_ROUTE=debian forces the Debian route (to test it on a
# machine whose rustup happens to reach its download server).
TOOLCHAIN=""
if [ "${REPLAYGROUND_TOOLCHAIN_ROUTE:-}" = debian ]; then
    debian_ready || build_debian_toolchain
    TOOLCHAIN=debian
elif has_wasm_std rustc; then
    TOOLCHAIN=active
elif debian_ready; then
    TOOLCHAIN=debian
elif command -v rustup >/dev/null && timeout 20 rustup target add wasm32-unknown-unknown >&2 2>/dev/null && has_wasm_std rustc; then
    work "added the wasm32-unknown-unknown target with rustup"
    TOOLCHAIN=active
else
    log "rustup cannot add wasm32-unknown-unknown here; using Debian's rustc-web"
    build_debian_toolchain
    TOOLCHAIN=debian
fi

# ---------------------------------------------------------------- environment
TOOLS="$REPLAYGROUND_CACHE/tools"
{
    echo "# Written by scripts/setup.sh; loaded by the other scripts."
    echo "export REPLAYGROUND_CACHE='$REPLAYGROUND_CACHE'"
    echo "export REPLAYGROUND_TOOLCHAIN='$TOOLCHAIN'"
    if [ "$TOOLCHAIN" = debian ]; then
        # One rustc for native and wasm builds, or cargo rebuilds the target dir.
        echo "export PATH='$TOOLS/bin:$DEB_RUST/usr/bin':\"\$PATH\""
        echo "export LD_LIBRARY_PATH='$DEB_LIB'\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
        echo "export RUSTC='$DEB_RUST/usr/bin/rustc'"
        echo "export CARGO='$DEB_RUST/usr/bin/cargo'"
        echo "export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER='wasm-ld-$LLVM'"
    else
        echo "export PATH='$TOOLS/bin':\"\$PATH\""
    fi
    # sqlite-wasm-rs compiles SQLite's C for wasm32 with the cc crate.
    echo "export CC_wasm32_unknown_unknown='clang-$LLVM'"
    echo "export AR_wasm32_unknown_unknown='llvm-ar-$LLVM'"
    echo "export CHROMEDRIVER='/usr/bin/chromedriver'"
    echo "export REPLAYGROUND_CHROMIUM='/usr/bin/chromium'"
} >"$REPLAYGROUND_CACHE/env.sh.new"
if ! cmp -s "$REPLAYGROUND_CACHE/env.sh.new" "$REPLAYGROUND_CACHE/env.sh" 2>/dev/null; then
    mv "$REPLAYGROUND_CACHE/env.sh.new" "$REPLAYGROUND_CACHE/env.sh"
else
    rm "$REPLAYGROUND_CACHE/env.sh.new"
fi
load_replayground_env

# ---------------------------------------------------------------- 3. tools
BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/"/, "", $3); print $3; exit}' "$REPLAYGROUND_ROOT/Cargo.lock")
[ -n "$BINDGEN_VERSION" ] || die "cannot read the wasm-bindgen version from Cargo.lock"
if [ "$("$TOOLS/bin/wasm-bindgen" --version 2>/dev/null)" != "wasm-bindgen $BINDGEN_VERSION" ]; then
    work "installing wasm-bindgen-cli $BINDGEN_VERSION (about 3 minutes)"
    # No --locked: its lock file names a webpki-roots release the registry here lacks.
    cargo install -q --root "$TOOLS" --force wasm-bindgen-cli --version "=$BINDGEN_VERSION" >&2
fi
if ! "$TOOLS/bin/wasm-pack" --version >/dev/null 2>&1; then
    work "installing wasm-pack (about 4 minutes)"
    cargo install -q --root "$TOOLS" wasm-pack >&2
fi

FUZZ_VERSION=0.13.2
if [ "$("$TOOLS/bin/cargo-fuzz" --version 2>/dev/null)" != "cargo-fuzz $FUZZ_VERSION" ]; then
    work "installing cargo-fuzz $FUZZ_VERSION (about 2 minutes)"
    cargo install -q --root "$TOOLS" --force cargo-fuzz --version "=$FUZZ_VERSION" >&2
fi

MDBOOK_VERSION=0.4.52
if [ "$("$TOOLS/bin/mdbook" --version 2>/dev/null)" != "mdbook v$MDBOOK_VERSION" ]; then
    work "installing mdbook $MDBOOK_VERSION, the book's builder (about 3 minutes)"
    # Without its server and file watcher: the book is built, and served by scripts/serve.py.
    cargo install -q --root "$TOOLS" --force mdbook --version "=$MDBOOK_VERSION" \
        --no-default-features --features search >&2
fi

# wasm-opt: a shim on PATH (before any system wasm-opt) that runs binaryen's
# npm build, installed from scripts/node's lock file.
BINARYEN="$REPLAYGROUND_CACHE/binaryen"
NODE_TOOLS="$REPLAYGROUND_ROOT/scripts/node"
command -v npm >/dev/null || die "npm is needed for wasm-opt and the end-to-end tests"
WANT=$(cat "$NODE_TOOLS/package.json" "$NODE_TOOLS/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$BINARYEN/.lock.sha256" 2>/dev/null)" != "$WANT" ] || [ ! -x "$TOOLS/bin/wasm-opt" ]; then
    work "installing binaryen (wasm-opt) from npm"
    rm -rf "$BINARYEN"
    mkdir -p "$BINARYEN" "$TOOLS/bin"
    cp "$NODE_TOOLS/package.json" "$NODE_TOOLS/package-lock.json" "$BINARYEN/"
    (cd "$BINARYEN" && npm ci --no-audit --no-fund --loglevel=error >&2)
    printf '#!/bin/sh\n# binaryen from npm (see scripts/setup.sh)\nexec node "%s/node_modules/binaryen/bin/wasm-opt" "$@"\n' "$BINARYEN" >"$TOOLS/bin/wasm-opt"
    chmod +x "$TOOLS/bin/wasm-opt"
    echo "$WANT" >"$BINARYEN/.lock.sha256"
fi

# ---------------------------------------------------------------- 4. node
E2E="$REPLAYGROUND_ROOT/tests/e2e"
if [ -f "$E2E/package-lock.json" ]; then
    STAMP="$E2E/node_modules/.replayground-lock.sha256"
    WANT=$(sha256sum "$E2E/package-lock.json" | cut -d' ' -f1)
    if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
        work "installing Node packages for the end-to-end tests"
        # Playwright must never download a browser: Debian's Chromium is used.
        (cd "$E2E" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >&2)
        echo "$WANT" >"$STAMP"
    fi
fi

ELAPSED=$(($(date +%s) - START))
if [ "$DID_WORK" -eq 0 ]; then
    log "machine already ready (toolchain: $TOOLCHAIN, wasm-bindgen $BINDGEN_VERSION); nothing to do (${ELAPSED}s)"
else
    log "machine ready (toolchain: $TOOLCHAIN, wasm-bindgen $BINDGEN_VERSION) in ${ELAPSED}s"
fi
