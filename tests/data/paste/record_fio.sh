#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the UML board: hwcrypto vm uml --exec 'sh tests/data/paste/record_fio.sh'.
# fio randrw 4k on a plain dm-crypt volume (key from /dev/urandom, kept in tmpfs) over a
# loop device on a tmpfs file, first directly, then over a dm-delay target on a second
# loop device (a slow disk: 5 ms per request); each with aes-fixed-time (aes_ti) serving
# aes, then with aes-generic (aes_ti removed).  Everything lives in a tmpfs under the
# board's /tmp; the mappings and loop devices are removed before the board exits.
# Marker lines "@@@ NAME @@@ COMMAND" delimit the runs for split_runs.py.
set -u
work=/tmp/fio-paste
loop=
slowloop=
cleanup() {
    dmsetup remove paste-crypt 2>/dev/null
    dmsetup remove paste-slow 2>/dev/null
    for device in $loop $slowloop; do losetup -d "$device"; done
    umount $work 2>/dev/null
    echo "@@@ cleanup @@@ losetup -a; dmsetup ls"
    losetup -a
    dmsetup ls
}
trap cleanup EXIT
fail() { echo "record_fio: $*"; exit 1; }

mkdir -p $work
mount -t tmpfs -o size=300m tmpfs $work || fail "tmpfs"
dd if=/dev/zero of=$work/fast.img bs=1M count=140 status=none
dd if=/dev/zero of=$work/slow.img bs=1M count=140 status=none
head -c 64 /dev/urandom > $work/key
loop=$(losetup -f --show $work/fast.img) || fail "losetup fast"
slowloop=$(losetup -f --show $work/slow.img) || fail "losetup slow"
modprobe dm_delay
sectors=$(blockdev --getsz "$slowloop")
dmsetup create paste-slow --table "0 $sectors delay $slowloop 0 5" || fail "dm-delay"

FIO="fio --name=randrw --rw=randrw --bs=4k --direct=1 --ioengine=libaio --iodepth=4"
FIO="$FIO --size=128m --runtime=8 --time_based --randrepeat=1"
fio_on() {   # NAME DEVICE [fio args...]
    name=$1; dev=$2; shift 2
    cryptsetup open --type plain --cipher aes-xts-plain64 --key-size 512 \
        --key-file $work/key "$dev" paste-crypt || fail "cryptsetup open $dev"
    echo "@@@ $name @@@ $FIO --filename=/dev/mapper/paste-crypt $*"
    $FIO --filename=/dev/mapper/paste-crypt "$@" 2>&1
    cryptsetup close paste-crypt
}
for cipher in aes_ti aes_generic; do
    if [ $cipher = aes_generic ]; then rmmod aes_ti; fi
    echo "@@@ fio_driver_$cipher @@@ /proc/crypto"
    grep -A4 -E '^name +: aes$' /proc/crypto | grep -E '^(driver|priority)'
    fio_on fio_loop_$cipher "$loop"
    fio_on fio_slow_$cipher /dev/mapper/paste-slow
    fio_on fio_slow_${cipher}_json /dev/mapper/paste-slow --output-format=json
done
fio_on fio_loop_twojobs "$loop" --numjobs=2
echo "@@@ end @@@"
