#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside a board: hwcrypto vm {uml,qemu} --exec 'sh tests/data/paste/record_cryptsetup.sh BOARD'.
# Marker lines "@@@ NAME @@@ COMMAND" let split_runs.py cut the output into raw files.
board=$1
run() {
    name=$1; shift
    echo "@@@ $name @@@ $*"
    "$@" 2>&1
}
drivers() {
    echo "@@@ ${board}_drivers_$1 @@@ /proc/crypto"
    grep -A4 -E '^name +: (aes|cbc\(aes\)|xts\(aes\)|serpent|twofish)$' /proc/crypto |
        grep -E '^(name|driver|priority)'
}
if [ "$board" = qemu ]; then
    # Without a modprobe helper the kernel cannot load serpent/twofish on demand:
    # cryptsetup then prints N/A rows for them (a kernel lacking those ciphers).
    saved=$(cat /proc/sys/kernel/modprobe)
    echo /bin/false > /proc/sys/kernel/modprobe
    run qemu_cryptsetup_na cryptsetup benchmark
    echo "$saved" > /proc/sys/kernel/modprobe
    run qemu_cryptsetup cryptsetup benchmark
    drivers default
    run qemu_cryptsetup_single cryptsetup benchmark -c aes-xts -s 512
    run qemu_cryptsetup_missing cryptsetup benchmark -c camellia-foo -s 256
fi
if [ "$board" = uml ]; then
    drivers default
    run uml_cryptsetup_aes_ti cryptsetup benchmark
    # aes-fixed-time (aes_ti, priority 101) serves aes by default; without it aes-generic does.
    rmmod aes_ti
    drivers no_aes_ti
    run uml_cryptsetup_aes_generic cryptsetup benchmark
    run uml_cryptsetup_pbkdf2 cryptsetup benchmark --pbkdf pbkdf2 --hash sha256
fi
if [ "$board" = uml-repeat ]; then
    # The same pair again, twice, interleaved: how much do rows move between runs when
    # no driver changes?
    for round in 2 3; do
        modprobe aes_ti
        run uml_cryptsetup_aes_ti_$round cryptsetup benchmark
        rmmod aes_ti
        run uml_cryptsetup_aes_generic_$round cryptsetup benchmark
    done
fi
echo "@@@ end @@@"
