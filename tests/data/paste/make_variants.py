# SPDX-License-Identifier: MIT
"""Derive pasted-post variants from the real board outputs in raw/ (writes variants/).

Every variant is a pure function of raw files: what a forum, a mail client or a hurried
user does to tool output -- whitespace collapsed, CRLF, tabs, shell prompts, prose in
other languages before/between/after, a value glued to the next words, a whole table on
one line, lines dropped, repeated or cut off, several tables in one post.  No number is
typed in here; the only text written by hand is the prose and the prompts.

Two variants change the *format* to one this host cannot run, keeping the recorded
numbers: `cs_1x` (cryptsetup 1.x: no argon2 lines, no "for 256-bit key", other header
spacing) and `ossl_11_names` (OpenSSL 1.1's legacy spelling "aes-128 cbc" and no build
header).  They test the parser on those spellings, not what those versions measure.

    python3 tests/data/paste/make_variants.py        # rewrite variants/*.txt
    (tests/unit/test_parse_variants.py checks the files are what this script makes)
"""

# ruff: noqa: RUF001  (the prose is Japanese, Chinese, Russian: their punctuation is meant)
from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
RAW = HERE / "raw"
OUT = HERE / "variants"

PROSE = {
    "ja": "カーネル 6.1 の UML ボードで cryptsetup benchmark を実行しました。結果は以下の通り。",
    "ja_after": "どなたか、この違いの理由が分かりますか？よろしくお願いします。",
    "de": "Hallo zusammen, hier die Ausgabe auf meinem Board (Kernel 6.1):",
    "de_after": "Warum fehlen serpent und twofish? Danke für jeden Hinweis.",
    "fr": "Bonjour, voici ce que donne fio sur le volume chiffré :",
    "fr_after": "Les deux essais donnent la même chose, le disque est-il la limite ?",
    "es": "Hola a todos, aquí está la salida JSON de fio:",
    "es_after": "¿Alguien sabe por qué no cambia nada?",
    "ru": "Всем привет! Вот вывод openssl speed с движком afalg:",
    "zh": "这是我的测试结果，请帮忙看看。",
    "en": "Here is what I get on the board:",
}


def raw(name: str) -> str:
    return (RAW / f"{name}.txt").read_text(encoding="utf-8")


def lines_of(text: str) -> list[str]:
    return text.splitlines()


def joined(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def collapse(text: str) -> str:
    """Runs of blanks become one, lines are stripped (HTML rendering of a paste)."""
    return joined([re.sub(r"\s+", " ", line).strip() for line in lines_of(text)])


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def tabs(text: str) -> str:
    return re.sub(r" {2,}", "\t", text)


def glue(*parts: str) -> str:
    """Parts run into each other: the line break between them is lost."""
    return "".join(part.rstrip("\n") for part in parts[:-1]) + parts[-1]


def drop(text: str, number: int) -> str:
    lines = lines_of(text)
    return joined(lines[: number - 1] + lines[number:])


def duplicate(text: str, number: int) -> str:
    lines = lines_of(text)
    return joined([*lines[:number], lines[number - 1], *lines[number:]])


def cut_after(text: str, marker: str) -> str:
    """Everything up to and including the first `marker`: a paste cut short there."""
    return text[: text.index(marker) + len(marker)] + "\n"


def without(text: str, pattern: str) -> str:
    return joined([line for line in lines_of(text) if not re.search(pattern, line)])


def one_line(text: str) -> str:
    return " ".join(line.strip() for line in lines_of(text) if line.strip()) + "\n"


def cryptsetup_1x(text: str) -> str:
    text = without(text, r"^argon2")
    text = text.replace(" for 256-bit key", "")
    return text.replace(
        "#     Algorithm |       Key |      Encryption |      Decryption",
        "#  Algorithm | Key |  Encryption |  Decryption",
    )


def openssl_11_names(text: str) -> str:
    text = without(text, r"^(version|built on|options|compiler|CPUINFO):")
    return re.sub(r"\b(aes|camellia)-(128|192|256)-cbc\b", r"\1-\2 cbc", text)


def post(*parts: str) -> str:
    return "\n".join(part.rstrip("\n") for part in parts) + "\n"


def _scenario_cryptsetup() -> str:
    """(a) newer table first (aes_ti serves aes), older second; its heading glued on."""
    return glue(
        post(
            PROSE["ja"],
            "",
            "新しいカーネル (aes_ti あり, aes-fixed-time):",
            raw("uml_cryptsetup_aes_ti"),
        ),
        post(
            "以前のカーネル (aes-generic):",
            raw("uml_cryptsetup_aes_generic"),
            "",
            PROSE["ja_after"],
        ),
    )


_OPENSSL_SIX = (
    ("openssl_legacy", "without the engine, legacy names:"),
    ("openssl_evp", "without the engine, -evp:"),
    ("openssl_engine_legacy", "with afalg (explicit), legacy names:"),
    ("openssl_engine_evp", "with afalg (explicit), -evp:"),
    ("openssl_engine_legacy_cputime", "with afalg, CPU time, legacy names:"),
    ("openssl_engine_evp_cputime", "with afalg, CPU time, -evp:"),
)
_COMMANDS = {
    "openssl_legacy": "openssl speed -elapsed -seconds 1 aes-128-cbc",
    "openssl_evp": "openssl speed -elapsed -evp aes-128-cbc -seconds 1",
    "openssl_engine_legacy": "openssl speed -elapsed -seconds 1 -engine afalg aes-128-cbc",
    "openssl_engine_evp": "openssl speed -elapsed -seconds 1 -engine afalg -evp aes-128-cbc",
    "openssl_engine_legacy_cputime": "openssl speed -seconds 1 -engine afalg aes-128-cbc",
    "openssl_engine_evp_cputime": "openssl speed -seconds 1 -engine afalg -evp aes-128-cbc",
    "openssl_camellia": "openssl speed -elapsed -seconds 1 camellia-128-cbc",
    "openssl_engine_camellia": "openssl speed -elapsed -seconds 1 -engine afalg camellia-128-cbc",
    "openssl_mr": "openssl speed -elapsed -seconds 1 -mr -evp aes-128-cbc",
}


def _scenario_openssl() -> str:
    """(b) six tables, each under a heading and its command behind a prompt."""
    parts = [PROSE["ru"], ""]
    for name, heading in _OPENSSL_SIX:
        parts += [heading, f"root@board:~# {_COMMANDS[name]}", raw(name)]
    return post(*parts, "Any idea why the engine is so slow?")


VARIANTS: dict[str, Callable[[], str]] = {
    # cryptsetup benchmark
    "cs_collapsed": lambda: collapse(raw("uml_cryptsetup_aes_ti")),
    "cs_crlf": lambda: crlf(raw("uml_cryptsetup_aes_ti")),
    "cs_tabs": lambda: tabs(raw("uml_cryptsetup_aes_ti")),
    "cs_prompt_dollar": lambda: "$ cryptsetup benchmark\n" + raw("uml_cryptsetup_aes_ti"),
    "cs_prompt_bracket": lambda: "[root@host ~]# cryptsetup benchmark\n" + raw("qemu_cryptsetup"),
    "cs_prompt_debian": lambda: (
        "root@box:~# cryptsetup benchmark -c aes-xts -s 512\n" + raw("qemu_cryptsetup_single")
    ),
    "cs_prose_ja": lambda: post(PROSE["ja"], raw("qemu_cryptsetup"), PROSE["ja_after"]),
    "cs_na_de": lambda: post(PROSE["de"], raw("qemu_cryptsetup_na"), PROSE["de_after"]),
    "cs_one_line": lambda: one_line(raw("uml_cryptsetup_aes_generic")),
    "cs_glued": lambda: glue(raw("uml_cryptsetup_aes_ti"), "The next run was on QEMU.\n"),
    "cs_1x": lambda: cryptsetup_1x(raw("uml_cryptsetup_aes_generic")),
    "cs_dropped": lambda: drop(raw("uml_cryptsetup_aes_ti"), 12),
    "cs_duplicated": lambda: duplicate(raw("uml_cryptsetup_aes_ti"), 12),
    "cs_truncated": lambda: cut_after(raw("uml_cryptsetup_aes_ti"), "241.2 MiB/s"),
    # openssl speed
    "ossl_legacy_collapsed": lambda: collapse(raw("openssl_legacy")),
    "ossl_evp_crlf": lambda: crlf(raw("openssl_evp")),
    "ossl_sha256_tabs": lambda: tabs(raw("openssl_sha256")),
    "ossl_mr_prompt": lambda: f"$ {_COMMANDS['openssl_mr']}\n" + raw("openssl_mr"),
    "ossl_multi_zh": lambda: post(PROSE["zh"], raw("openssl_multi")),
    "ossl_rsa_glued": lambda: glue(raw("openssl_rsa2048"), "Sign is slow.\n"),
    "ossl_table_glued": lambda: glue(raw("openssl_evp"), "The next run used the engine.\n"),
    "ossl_11_names": lambda: openssl_11_names(raw("openssl_engine_legacy")),
    "ossl_no_table": lambda: cut_after(raw("openssl_legacy"), "in 1.00s\nversion: 3.0.19"),
    "ossl_row_cut": lambda: cut_after(raw("openssl_legacy"), "1971348.48k"),
    "ossl_mr_no_results": lambda: without(raw("openssl_mr"), r"^\+[HF]:"),
    "ossl_multi_no_sum": lambda: without(raw("openssl_multi"), r"^AES-128-CBC "),
    "ossl_bytes": lambda: raw("openssl_bytes"),
    # fio
    "fio_collapsed": lambda: collapse(raw("fio_slow_aes_ti")),
    "fio_crlf": lambda: crlf(raw("fio_loop_aes_ti")),
    "fio_prompt": lambda: (
        "[root@host ~]# fio --name=randrw --rw=randrw --bs=4k --numjobs=2\n"
        + raw("fio_loop_twojobs")
    ),
    "fio_json_es": lambda: post(PROSE["es"], raw("fio_slow_aes_ti_json"), PROSE["es_after"]),
    "fio_json_cut": lambda: cut_after(raw("fio_slow_aes_ti_json"), '"disk_util" : ['),
    "fio_json_glued": lambda: glue(raw("fio_slow_aes_generic_json"), "That was run two.\n"),
    "fio_util_glued": lambda: glue(raw("fio_slow_aes_generic"), "Second run below.\n"),
    # whole posts: the three scenarios and a mixed one for `auto`
    "post_cryptsetup_two_kernels": _scenario_cryptsetup,
    "post_openssl_six": _scenario_openssl,
    "post_openssl_camellia": lambda: post(
        "camellia without the engine:",
        f"$ {_COMMANDS['openssl_camellia']}",
        raw("openssl_camellia"),
        "and with -engine afalg (afalg only does AES-CBC):",
        f"$ {_COMMANDS['openssl_engine_camellia']}",
        raw("openssl_engine_camellia"),
    ),
    "post_fio_storage": lambda: post(
        PROSE["fr"],
        "Essai 1 (aes-fixed-time):",
        raw("fio_slow_aes_ti"),
        "Essai 2 (aes-generic):",
        raw("fio_slow_aes_generic"),
        PROSE["fr_after"],
    ),
    "post_fio_json_storage": lambda: post(
        PROSE["es"], raw("fio_slow_aes_ti_json"), "y luego:", raw("fio_slow_aes_generic_json")
    ),
    "post_fio_cipher_bound": lambda: post(
        "loop on tmpfs, aes-fixed-time:",
        raw("fio_loop_aes_ti"),
        "loop on tmpfs, aes-generic:",
        raw("fio_loop_aes_generic"),
    ),
    "post_everything_auto": lambda: crlf(
        post(
            PROSE["en"],
            "## cryptsetup",
            raw("qemu_cryptsetup_na"),
            "## openssl",
            "$ openssl speed -elapsed -seconds 1 sha256",
            raw("openssl_sha256"),
            raw("openssl_rsa2048"),
            "## fio",
            raw("fio_slow_aes_ti_json"),
            "## tcrypt",
            "root@board:~# modprobe tcrypt mode=403 sec=1; dmesg",
            raw("qemu_tcrypt_sha1"),
            PROSE["de_after"],
        )
    ),
}


def main(argv: list[str]) -> int:
    OUT.mkdir(exist_ok=True)
    for name, build in VARIANTS.items():
        (OUT / f"{name}.txt").write_bytes(build().encode("utf-8"))
    print(f"wrote {len(VARIANTS)} variants to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
