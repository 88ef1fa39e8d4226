#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside a board (hwcrypto vm uml --exec 'sh tests/data/paste/record_openssl.sh').
# Each run is announced by a marker line "@@@ NAME @@@ COMMAND" so the host can split the
# board's output into one raw file per run (tests/data/paste/split_runs.py).
run() {
    name=$1; shift
    echo "@@@ $name @@@ $*"
    "$@" 2>&1
}
if [ "${1:-}" != camellia ]; then
run openssl_legacy openssl speed -elapsed -seconds 1 aes-128-cbc
run openssl_evp openssl speed -elapsed -evp aes-128-cbc -seconds 1
run openssl_engine_legacy openssl speed -elapsed -seconds 1 -engine afalg aes-128-cbc
run openssl_engine_evp openssl speed -elapsed -seconds 1 -engine afalg -evp aes-128-cbc
run openssl_engine_legacy_cputime openssl speed -seconds 1 -engine afalg aes-128-cbc
run openssl_engine_evp_cputime openssl speed -seconds 1 -engine afalg -evp aes-128-cbc
run openssl_mr openssl speed -elapsed -seconds 1 -mr -evp aes-128-cbc
run openssl_multi openssl speed -elapsed -seconds 1 -multi 2 -evp aes-128-cbc
run openssl_sha256 openssl speed -elapsed -seconds 1 sha256
run openssl_rsa2048 openssl speed -elapsed -seconds 1 rsa2048
run openssl_rsa2048_mr openssl speed -elapsed -seconds 1 -mr rsa2048
run openssl_bytes openssl speed -elapsed -seconds 1 -bytes 4096 -evp aes-256-gcm
fi
# afalg serves only AES-CBC: with camellia the engine is named but does not do the work.
if [ "${1:-}" = camellia ]; then
    run openssl_camellia openssl speed -elapsed -seconds 1 camellia-128-cbc
    run openssl_engine_camellia openssl speed -elapsed -seconds 1 -engine afalg camellia-128-cbc
fi
echo "@@@ end @@@"
