#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A small x86-64 LAVA guest for the QEMU device type: Debian 12 (minbase) with python3 and
# the Python stack lab images carry (python3-pytest, -benchmark, -xdist, -pexpect,
# -cryptography, -cryptography-vectors, python3-venv), the crypto/ATA/virtio modules of one
# Debian kernel, and an /init that gives LAVA a shell on ttyS0. The plugin itself is NOT in
# the image: the job's test definition installs the wheel the way users do (venv over the
# system packages, pip install --no-deps), so one image serves every build of the plugin.
#
#   guest-image.sh [CACHE_DIR]    -> prints the directory holding vmlinuz and guest.cpio
#
# Built once per (this script, kernel release) and kept under CACHE_DIR (default
# ${XDG_CACHE_HOME:-~/.cache}/pytest-hwcrypto/lava-guest/<key>); a second call prints the
# cached directory at once. Needs root, debootstrap and cpio; HWCRYPTO_DEBIAN_MIRROR picks
# the mirror (default http://deb.debian.org/debian), HWCRYPTO_GUEST_KERNEL the kernel
# (default: the newest /boot/vmlinuz-*-amd64). Progress goes to stderr.
set -euo pipefail

say() { echo "guest-image: $*" >&2; }
die() { say "error: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap and device nodes); run it with sudo"
command -v debootstrap >/dev/null || die "debootstrap missing: apt-get install debootstrap"
command -v cpio >/dev/null || die "cpio missing: apt-get install cpio"

kernel=${HWCRYPTO_GUEST_KERNEL:-$(ls /boot/vmlinuz-*-amd64 2>/dev/null | sort -V | tail -n 1)}
[ -f "$kernel" ] || die "no kernel: install linux-image-amd64 or set HWCRYPTO_GUEST_KERNEL"
release=${kernel##*/vmlinuz-}
modules=/lib/modules/$release
[ -d "$modules/kernel" ] || die "no modules for $release in $modules"
mirror=${HWCRYPTO_DEBIAN_MIRROR:-http://deb.debian.org/debian}

base_packages=kmod,busybox
python_packages="python3 python3-venv python3-pytest python3-pytest-benchmark python3-pytest-xdist
  python3-pexpect python3-cryptography python3-cryptography-vectors"

key=$( { cat "$0"; echo "$release $base_packages $python_packages"; } | sha256sum | cut -c1-16)
base=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/pytest-hwcrypto/lava-guest}
out=$base/$key
if [ -f "$out/guest.cpio" ] && [ -f "$out/vmlinuz" ]; then
  say "cached: $out ($(du -m "$out/guest.cpio" | cut -f1) MB)"
  echo "$out"
  exit 0
fi

started=$SECONDS
mkdir -p "$base"
work=$(mktemp -d "$base/build.XXXXXX")
root=$work/root
cleanup() {
  for fs in dev/pts dev proc sys; do
    mountpoint -q "$root/$fs" 2>/dev/null && umount -l "$root/$fs"
  done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {  # keep the log where the user can read it after the build directory is gone
  local log=$1; shift
  cp "$log" "$base/last-failure.log" 2>/dev/null || true
  tail -n 25 "$log" >&2
  die "$* (log above; whole log: $base/last-failure.log)"
}
say "debootstrap bookworm (minbase + $base_packages) from $mirror"
# debootstrap's own I: lines are the progress; the rest of its chatter goes to a log.
debootstrap --variant=minbase --include="$base_packages" bookworm "$root" "$mirror" \
  2>&1 | tee "$work/build.log" | grep --line-buffered '^I: ' | sed -u 's/^/guest-image: /' >&2 \
  || true
[ -x "$root/bin/bash" ] && [ ! -e "$root/debootstrap" ] || fail "$work/build.log" "debootstrap failed"
say "debootstrap done at +$((SECONDS - started)) s; installing the Python stack with apt"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# shellcheck disable=SC2086  # the package list is words
chroot "$root" /usr/bin/env DEBIAN_FRONTEND=noninteractive sh -c \
  "apt-get update -q && apt-get install -y -q -o Dpkg::Use-Pty=0 --no-install-recommends $(echo $python_packages)" \
  >"$work/apt.log" 2>&1 || fail "$work/apt.log" "apt-get install in the guest failed"
grep -c '^Setting up ' "$work/apt.log" | sed 's/^/guest-image: installed /; s/$/ packages/' >&2
for fs in dev/pts dev proc sys; do umount -l "$root/$fs"; done
[ -x "$root/usr/bin/python3" ] || fail "$work/apt.log" "no python3 in the guest"
say "Python stack in at +$((SECONDS - started)) s"

# What a test run does not need: apt lists and caches, docs, man pages, locales.
rm -rf "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* \
  "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/*

say "modules of $release: crypto, ATA disk, ext4, virtio"
mkdir -p "$root$modules/kernel"
for dir in crypto arch/x86/crypto drivers/crypto drivers/ata drivers/virtio lib fs/ext4 \
  fs/jbd2 fs/mbcache.ko block net/core/failover.ko drivers/net/net_failover.ko \
  drivers/net/virtio_net.ko drivers/scsi/scsi_mod.ko drivers/scsi/scsi_common.ko \
  drivers/scsi/sd_mod.ko drivers/char/hw_random; do
  [ -e "$modules/kernel/$dir" ] || continue
  mkdir -p "$(dirname "$root$modules/kernel/$dir")"
  cp -a "$modules/kernel/$dir" "$root$modules/kernel/$dir"
done
cp -a "$modules"/modules.builtin* "$modules"/modules.order "$root$modules/"
depmod -b "$root" "$release"

cat >"$root/init" <<'INIT'
#!/bin/sh
# pytest-hwcrypto LAVA guest: mount what the kernel API needs, load the disk and network
# modules, name LAVA's overlay disk by UUID (no udev here), bring up QEMU's user network,
# and give LAVA a root shell on the serial console.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm /run /tmp
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null
# What udev would do: load the drivers of every device and CPU feature the kernel reports
# (virtio-crypto, aesni_intel, sha256_ssse3, ...), then the disk, network and AF_ALG ones.
# Twice: the virtio bus shows its devices (virtio-crypto, ...) once virtio_pci is bound.
for pass in 1 2; do
  # (the CPU's features are one alias in /sys/devices/system/cpu/modalias: aesni_intel...)
  cat /sys/devices/system/cpu/modalias /sys/bus/*/devices/*/modalias 2>/dev/null | sort -u |
  while read -r alias; do
    modprobe -q "$alias" 2>/dev/null
  done
done
for module in ata_piix sd_mod ext4 virtio_pci virtio_net af_alg algif_skcipher algif_hash \
  algif_aead algif_rng crypto_user; do
  modprobe -q "$module" 2>/dev/null
done
sleep 1
# Kernel messages stay in dmesg: on the console they would cut into LAVA's signal lines.
echo 1 >/proc/sys/kernel/printk
mkdir -p /dev/disk/by-uuid
for disk in /dev/sd? /dev/sd?[0-9] /dev/vd? /dev/vd?[0-9]; do
  [ -b "$disk" ] || continue
  uuid=$(blkid -s UUID -o value "$disk" 2>/dev/null)
  [ -n "$uuid" ] && ln -sf "$disk" "/dev/disk/by-uuid/$uuid"
done
busybox ip link set lo up
if busybox ip link set eth0 up 2>/dev/null; then
  busybox ip addr add 10.0.2.15/24 dev eth0
  busybox ip route add default via 10.0.2.2
fi
echo hwcrypto-guest >/proc/sys/kernel/hostname
echo "hwcrypto-guest: ready ($(uname -r), $(nproc) CPU)"
export PS1='hwcrypto-guest:~# '
while true; do
  setsid -c /bin/bash --norc -i </dev/ttyS0 >/dev/ttyS0 2>&1
done
INIT
chmod 755 "$root/init"

say "packing guest.cpio"
mkdir -p "$out.tmp"
(cd "$root" && find . -xdev | LC_ALL=C sort | cpio --quiet -o -H newc) >"$out.tmp/guest.cpio"
cp "$kernel" "$out.tmp/vmlinuz"
echo "$release" >"$out.tmp/release"
rm -rf "$out" && mv "$out.tmp" "$out"
say "built $out in $((SECONDS - started)) s: guest.cpio $(du -m "$out/guest.cpio" | cut -f1) MB"
echo "$out"
