# SPDX-License-Identifier: MIT
"""Add two benchmark knobs to a Linux 6.1 crypto tree (for `hwcrypto ab` benchmarks; GPL-2.0
like the tree it edits, the project's own lines).

* `aes_generic.bench_work` (/sys/module/aes_generic/parameters/bench_work): extra rounds of
  a trivial loop per 16-byte block aes-generic encrypts -- slows one driver, in
  instructions that speed up and slow down with the machine as the driver's own do.
* `algif_skcipher.bench_work_per_kib`: the same per KiB of every AF_ALG skcipher request
  -- slows every driver alike (what a relative verdict cannot see).

Both default to 0, so the kernel is unchanged until a value is written. Usage:
`python benchmarks/ab_kernel_knobs.py LINUX_TREE` (idempotent).
"""

from __future__ import annotations

import sys
from pathlib import Path

MARK = "pytest-hwcrypto benchmark knob"

AES_KNOB = f"""
/* {MARK}: extra work per block, 0 = none */
static unsigned int hwcrypto_bench_work;
module_param_named(bench_work, hwcrypto_bench_work, uint, 0644);

static inline void hwcrypto_bench_spin(unsigned long rounds)
{{
	volatile unsigned long sink = 0;

	while (rounds--)
		sink += rounds;
}}

"""

AFALG_KNOB = f"""
/* {MARK}: extra work per KiB of every request, 0 = none */
static unsigned int hwcrypto_bench_work_per_kib;
module_param_named(bench_work_per_kib, hwcrypto_bench_work_per_kib, uint, 0644);

"""


def patch(tree: Path) -> None:
    aes = tree / "crypto/aes_generic.c"
    text = aes.read_text()
    if MARK not in text:
        head = "static void crypto_aes_encrypt(struct crypto_tfm *tfm, u8 *out, const u8 *in)\n{\n"
        at = text.index(head)
        body_start = text.index("\n\n", at) + 1  # after the declarations
        text = (
            text[:at]
            + AES_KNOB
            + text[at:body_start]
            + "\thwcrypto_bench_spin(hwcrypto_bench_work);\n"
            + text[body_start:]
        )
        aes.write_text(text)
    afalg = tree / "crypto/algif_skcipher.c"
    text = afalg.read_text()
    if MARK not in text:
        anchor = "static int _skcipher_recvmsg("
        text = text.replace(anchor, AFALG_KNOB + anchor, 1)
        free = "\n\nfree:\n\taf_alg_free_resources(areq);"
        spin = (
            "\n\tif (hwcrypto_bench_work_per_kib) {\n"
            "\t\tvolatile unsigned long sink = 0;\n"
            "\t\tunsigned long rounds =\n"
            "\t\t\t(unsigned long)hwcrypto_bench_work_per_kib * len / 1024;\n\n"
            "\t\twhile (rounds--)\n\t\t\tsink += rounds;\n\t}\n"
        )
        if free not in text:
            raise SystemExit(f"{afalg}: the free: label is not where 6.1 has it")
        text = text.replace(free, spin + free, 1)
        afalg.write_text(text)


if __name__ == "__main__":
    patch(Path(sys.argv[1]))
