#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Build the masked-AF_ALG x86-64 test kernel for the QEMU board (see README.md):
# Debian's linux-source-6.1 with ../masked_afalg/refuse-off-cpu.patch made in the tree,
# configured by virtme-ng (`vng --kconfig`) plus kernel.config, built with its modules.
#
#   nice -n 19 bash tests/data/masked_kernel/build.sh [WORKDIR]
#
# WORKDIR (default ~/.cache/pytest-hwcrypto/masked-kernel) gets the source tree
# (linux-source-6.1/, which stays: the test drivers are built against it), the installed
# kernel (install/boot/vmlinuz-<release>, install/lib/modules/<release>, whose `build`
# link points at the tree), build.log and times.txt (seconds per step). Run again, it
# rebuilds only what changed. The last lines printed are the board options to boot it.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
PATCH=$HERE/../masked_afalg/refuse-off-cpu.patch
FRAGMENT=$HERE/kernel.config
SOURCE_PACKAGE=linux-source-6.1
TARBALL=/usr/src/$SOURCE_PACKAGE.tar.xz
WORK=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/pytest-hwcrypto/masked-kernel}
TREE=$WORK/$SOURCE_PACKAGE
INSTALL=$WORK/install
LOG=$WORK/build.log
TIMES=$WORK/times.txt
JOBS=$(nproc)

say() { echo "masked kernel: $*"; }
fail() { echo "masked kernel: $*" >&2; exit 1; }

# -- what the build needs, each missing one named with how to get it
[ -f "$TARBALL" ] || fail "$TARBALL is missing: apt-get install $SOURCE_PACKAGE"
for tool in make gcc flex bison bc patch xz; do
    command -v "$tool" >/dev/null || fail "the kernel build needs $tool: apt-get install $tool"
done
for header in /usr/include/libelf.h /usr/include/openssl/ssl.h; do
    [ -f "$header" ] || fail "the kernel build needs $header: apt-get install libelf-dev libssl-dev"
done
VNG=$REPO/.venv/bin/vng
[ -x "$VNG" ] || VNG=$(command -v vng) || fail "needs virtme-ng's vng: pip install virtme-ng"
# vng starts virtme-configkernel through PATH: its own bin directory first
PATH=$(dirname "$VNG"):$PATH

mkdir -p "$WORK"
: >"$LOG"
step() {  # step NAME COMMAND...: run with output to the log, record its seconds
    local name=$1 began=$SECONDS
    shift
    say "$name ..."
    if ! "$@" >>"$LOG" 2>&1; then
        tail -n 30 "$LOG" >&2
        fail "$name failed (whole log: $LOG)"
    fi
    echo "$name $((SECONDS - began))" | tee -a "$TIMES"
}
echo "# $(date -u +%FT%TZ) $(uptime)" >>"$TIMES"

# -- the source tree, with the project's change
if [ ! -f "$TREE/Makefile" ]; then
    step extract tar -C "$WORK" -xaf "$TARBALL"
fi
if patch -d "$TREE" -p1 -R --dry-run --silent -i "$PATCH" >/dev/null 2>&1; then
    say "refuse-off-cpu.patch already in the tree"
else
    step patch patch -d "$TREE" -p1 --forward -i "$PATCH"
fi
grep -q HWCRYPTO_OFF_CPU_FLAGS "$TREE/crypto/af_alg.c" || fail "the change is not in $TREE/crypto/af_alg.c"

# -- configuration: again only when the fragment changed (a new .config rebuilds much)
stamp=$(sha256sum "$FRAGMENT" | cut -c1-16)
if [ "$(cat "$WORK/config.stamp" 2>/dev/null)" != "$stamp" ]; then
    configure() {  # (step runs it where errexit does not apply: each command checked)
        cd "$TREE" &&
            "$VNG" --kconfig --config "$FRAGMENT" &&
            # virtme's own list asks for debug info, which would triple the build: none here
            scripts/config --disable DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT \
                --disable DEBUG_INFO_DWARF4 --disable DEBUG_INFO_DWARF5 \
                --enable DEBUG_INFO_NONE --disable DEBUG_INFO_BTF &&
            make olddefconfig
    }
    step configure configure
    # what the board needs must have survived olddefconfig (a dependency can drop a line);
    # what was left out to save time may come back when something selects it: said only
    while IFS= read -r line; do
        case $line in
        CONFIG_*=*) grep -qxF "$line" "$TREE/.config" || fail "$TREE/.config lost '$line'" ;;
        "# CONFIG_"*" is not set")
            option=${line#\# }
            option=${option%% *}
            ! grep -q "^$option=" "$TREE/.config" || say "note: $option is set all the same" ;;
        esac
    done <"$FRAGMENT"
    echo "$stamp" >"$WORK/config.stamp"
fi

# -- build and install
step build make -C "$TREE" -j"$JOBS" bzImage modules
release=$(make -s -C "$TREE" kernelrelease)
rm -rf "$INSTALL/lib/modules/$release"
step modules_install make -C "$TREE" INSTALL_MOD_PATH="$INSTALL" INSTALL_MOD_STRIP=1 modules_install
mkdir -p "$INSTALL/boot"
cp "$TREE/arch/x86/boot/bzImage" "$INSTALL/boot/vmlinuz-$release"
# beside the image, as Debian installs it: the board reads CONFIG_PVH from it
cp "$TREE/.config" "$INSTALL/boot/config-$release"
[ "$(readlink -f "$INSTALL/lib/modules/$release/build")" = "$(readlink -f "$TREE")" ] ||
    fail "$INSTALL/lib/modules/$release/build does not point at $TREE"
say "built $release ($(du -sh "$INSTALL/boot/vmlinuz-$release" | cut -f1) image)"
echo "--hwcrypto-kernel=$INSTALL/boot/vmlinuz-$release"
echo "--hwcrypto-modules=$INSTALL/lib/modules/$release"
