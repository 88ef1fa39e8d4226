#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside the QEMU board (UML builds tcrypt but never returns from it):
#   hwcrypto vm qemu --exec 'sh tests/data/paste/record_tcrypt.sh'
# tcrypt mode=403 is the async sha1 hash speed test; modprobe always "fails" with EAGAIN
# once the tests ran (tcrypt never stays loaded), and the results are in the kernel log.
dmesg -C
echo "@@@ qemu_tcrypt_sha1 @@@ modprobe tcrypt mode=403 sec=1; dmesg"
modprobe tcrypt mode=403 sec=1 2>&1
dmesg
echo "@@@ end @@@"
