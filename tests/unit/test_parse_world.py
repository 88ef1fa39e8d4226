# SPDX-License-Identifier: MIT
"""Output as the world pastes it: locales, Markdown and HTML, kernel logs, old and new tools.

Every variant here is built from the project's own recordings (tests/data/paste/raw) or
written line by line after the tools' print formats, and must read to the same numbers
as the recording; tests/unit/test_world_paste.py measures the same on real posts.
The Kirkwood case closes the file: `hwcrypto compare` says storage-bound for two fio runs
the disk decided, whatever files they came from.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytest_hwcrypto.cli import main
from pytest_hwcrypto.model.results import COMPARE_SCHEMA_FILE, Results, json_schema
from pytest_hwcrypto.parsers import normalise
from pytest_hwcrypto.parsers.parse import ParsedDocument, parse_text, to_results
from pytest_hwcrypto.verdict import compare

RAW = Path(__file__).parent.parent / "data" / "paste" / "raw"
MIB = 2.0**20


def raw(name: str) -> str:
    return (RAW / f"{name}.txt").read_text(encoding="utf-8")


def values(document: ParsedDocument) -> dict[tuple[Any, ...], float]:
    return {
        (m.extra["table"], m.algorithm, m.key_bits, m.block_size, m.op): m.bytes_per_second
        for m in document.measurements
    }


def records(document: ParsedDocument) -> list[dict[str, Any]]:
    return [record.to_json() for _, record in document.records()]


# ---------------------------------------------------------------------------------------
# the normaliser, line by line


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("**aes-cbc 256b 509.6 MiB/s 2287.0 MiB/s**", "aes-cbc 256b 509.6 MiB/s 2287.0 MiB/s"),
        ("- `aes-xts 512b 88.7 MiB/s 54.6 MiB/s`", "aes-xts 512b 88.7 MiB/s 54.6 MiB/s"),
        ("* aes-xts 512b __88.7 MiB/s__ 54.6 MiB/s", "aes-xts 512b 88.7 MiB/s 54.6 MiB/s"),
        ("| aes-xts | 512b | 88.7 MiB/s | 54.6 MiB/s |", "aes-xts  512b  88.7 MiB/s  54.6 MiB/s"),
        ("|---|:---:|---|---|", ""),
        ("virtio_crypto_aes_cbc", "virtio_crypto_aes_cbc"),  # underscores in a name stay
        ("     |  1.00th=[19006],  5.00th=[19792],", "     |  1.00th=[19006],  5.00th=[19792],"),
    ],
)
def test_markdown_remnants_are_undone(line: str, expected: str) -> None:
    assert normalise.strip_markdown(line) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("aes-cbc 128b 690,1 MiB/s 3002,3 MiB/s", "aes-cbc 128b 690.1 MiB/s 3002.3 MiB/s"),
        ("aes-xts 512b 2.004,1 MiB/s 2.012,9 MiB/s", "aes-xts 512b 2004.1 MiB/s 2012.9 MiB/s"),
        ("options: bn(64,64) rc4(16x,int)", "options: bn(64,64) rc4(16x,int)"),
        (
            "read : io=1,5MB, bw=12,5KB/s, iops=3, runt=",
            "read : io=1.5MB, bw=12.5KB/s, iops=3, runt=",
        ),
        ("iops=852, runt= 30035msec", "iops=852, runt= 30035msec"),
    ],
)
def test_decimal_commas_before_a_unit_become_points(line: str, expected: str) -> None:
    assert normalise.locale_numbers(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "[ 1234.567890] tcrypt: test 0",
        "<6>[ 1234.567890] tcrypt: test 0",
        "[Sun Dec  6 10:00:00 2026] tcrypt: test 0",
        "[  12.000001] [    T1] tcrypt: test 0",
        "Dec  6 10:00:00 p9-host kernel: [ 1234.567890] tcrypt: test 0",
        "Dec  6 10:00:00 p9-host kernel: tcrypt: test 0",
        "2026-12-06T10:00:00+0000 rk3399 kernel: tcrypt: test 0",
        "[...] tcrypt: test 0",
    ],
)
def test_kernel_log_prefixes_are_removed(line: str) -> None:
    assert normalise.strip_log_prefix(line) == ("tcrypt: test 0", True)
    assert normalise.strip_log_prefix("tcrypt: test 0") == ("tcrypt: test 0", False)


def test_html_breaks_end_lines_and_entities_are_decoded() -> None:
    line = "<pre>aes-xts&nbsp;512b 88.7 MiB/s<br/>&gt; quoted</pre> <stdin>"
    assert normalise.html_lines(line) == ["aes-xts 512b 88.7 MiB/s", "> quoted", " <stdin>"]


# ---------------------------------------------------------------------------------------
# cryptsetup: locales, Markdown, HTML, side by side

_GERMAN = (  # cryptsetup's po/de.po
    ("# Tests are approximate using memory only (no storage IO).",
     "# Die Tests sind nur annähernd genau, da sie nicht auf den Datenträger zugreifen."),
    ("iterations per second for 256-bit key", "Iterationen pro Sekunde für 256-Bit-Schlüssel"),
    ("iterations,", "Iterationen,"),
    ("memory,", "Speicher,"),
    ("parallel threads (CPUs) for 256-bit key (requested 2000 ms time)",
     "parallele Threads (CPUs) für 256-Bit-Schlüssel (Zieldauer 2000 Millisekunden)"),
)  # fmt: skip
_GERMAN_HEADER = "#   Algorithmus | Schlüssel | Verschlüsselung | Entschlüsselung"


def german(text: str) -> str:
    for english, translated in _GERMAN:
        text = text.replace(english, translated)
    text = re.sub(r"(?m)^#\s*Algorithm\s*\|.*$", _GERMAN_HEADER, text)
    return re.sub(r"(\d+)\.(\d) MiB/s", r"\1,\2 MiB/s", text)


def test_a_german_cryptsetup_reads_as_the_english_one() -> None:
    english = parse_text("auto", raw("uml_cryptsetup_aes_ti"), "en.txt")
    post = "Mit cryptsetup benchmark:\n" + german(raw("uml_cryptsetup_aes_ti"))
    assert "119,4 MiB/s" in post and "Algorithmus" in post  # the variant is what it says
    document = parse_text("auto", post, "de.txt")
    assert values(document) == values(english)
    assert records(document) == records(english)
    assert document.tables[0].label == "Mit cryptsetup benchmark:"
    assert document.warnings == []


def test_a_translated_first_comment_above_the_header_alone() -> None:
    single = german(raw("qemu_cryptsetup_single"))
    assert "Algorithmus" in single and "PBKDF2" not in single
    document = parse_text("auto", f"Auf dem Zenbook:\n{single}", "de.txt")
    assert document.tables[0].label == "Auf dem Zenbook:"
    assert values(document) == values(parse_text("auto", raw("qemu_cryptsetup_single"), "en"))


def test_not_available_in_other_languages_is_a_missing_cipher() -> None:
    text = raw("qemu_cryptsetup_na")
    assert "N/A" in text
    english = parse_text("auto", text, "en.txt")
    for word in ("N/D", "\u041d/\u0414", "\u4e0d\u53ef\u7528", "(nicht zutreffend)"):
        document = parse_text("auto", text.replace("N/A", word), "l10n.txt")
        assert values(document) == values(english)
        assert records(document) == records(english)


def markdown(text: str) -> str:
    rows = [f"**{line.strip()}**" if "MiB/s" in line else line for line in text.splitlines()]
    return "Results:\n\n" + "\n".join(f"> - {row}" for row in rows) + "\n"


def html(text: str) -> str:
    body = "<br>".join(line.replace(" ", "&nbsp;") for line in text.splitlines())
    return f"<p>Results on the board:</p><pre><code>{body}</code></pre>"


@pytest.mark.parametrize("dress", [markdown, html])
def test_markdown_and_html_remnants_do_not_change_the_numbers(dress: Any) -> None:
    original = parse_text("auto", raw("uml_cryptsetup_aes_ti"), "raw.txt")
    dressed = dress(raw("uml_cryptsetup_aes_ti"))
    document = parse_text("auto", dressed, "post.txt")
    assert values(document) == values(original)
    assert records(document) == records(original)


def side_by_side(left: str, right: str, width: int = 70) -> str:
    """As `diff -y` prints two files (one ' | ' column at a fixed width)."""
    lines = []
    for a, b in zip(left.splitlines(), right.splitlines()):
        mark = "|" if a != b else " "
        lines.append(f"{a[: width - 1]:<{width}}{mark}  {b}")
    return "\n".join(lines) + "\n"


def test_two_runs_side_by_side_are_two_tables() -> None:
    left, right = raw("uml_cryptsetup_aes_ti"), raw("uml_cryptsetup_aes_generic")
    document = parse_text("auto", "diff -y ti.txt generic.txt\n" + side_by_side(left, right), "y")
    first = parse_text("auto", left, "l")
    second = parse_text("auto", right, "r")
    assert {k[1:]: v for k, v in values(document).items() if k[0] == 0} == {
        k[1:]: v for k, v in values(first).items()
    }
    assert {k[1:]: v for k, v in values(document).items() if k[0] == 1} == {
        k[1:]: v for k, v in values(second).items()
    }


def test_labels_prefer_the_line_that_tells_tables_apart() -> None:
    rows = raw("uml_cryptsetup_aes_ti")
    post = "".join(
        f"kernel v5.{minor}\n# cryptsetup benchmark\n{rows}\n" for minor in ("5.y", "4.6")
    )
    document = parse_text("auto", post, "sun8i-ce.txt")
    assert [table.label for table in document.tables] == ["kernel v5.5.y", "kernel v5.4.6"]
    assert [table.command.text if table.command else None for table in document.tables] == [
        "cryptsetup benchmark",
        "cryptsetup benchmark",
    ]
    # with nothing but the command above it, the command still names the table
    alone = parse_text("auto", f"$ cryptsetup benchmark\n{rows}", "alone.txt")
    assert alone.tables[0].label == "cryptsetup benchmark"


def test_kernel_messages_on_the_console_do_not_cut_a_table() -> None:
    lines = raw("uml_cryptsetup_aes_ti").splitlines()
    noisy = [
        f"[  106.{n:06d}] random: cryptsetup: uninitialized urandom read (16 bytes read)\n{line}"
        for n, line in enumerate(lines)
    ]
    document = parse_text("auto", "\n".join(noisy), "console.txt")
    original = parse_text("auto", raw("uml_cryptsetup_aes_ti"), "raw.txt")
    assert values(document) == values(original)


# ---------------------------------------------------------------------------------------
# fio 2.x


def fio_2x(document: ParsedDocument) -> str:
    """The fio 3.x run rewritten in fio 2.x's words (KB for KiB), the same numbers."""
    lines = ["randrw: (g=0): rw=randrw, bs=4K-4K/4K-4K/4K-4K, ioengine=libaio, iodepth=4"]
    lines += ["fio-2.2.10", "Starting 1 process", ""]
    lines.append("randrw: (groupid=0, jobs=1): err= 0: pid=823: Tue Dec  1 09:17:03 2026")
    for m in document.measurements:
        rate = m.bytes_per_second / 1024
        name = "read " if m.op == "read" else "write"
        lines.append(
            f"  {name}: io=3144.0KB, bw={rate:g}KB/s, iops={m.extra['iops']:g}, runt=  8019msec"
        )
        lines.append("    clat (usec): min=15321, max=24717, avg=20036.03, stdev=505.60")
        stdev = m.extra["bw_stdev"] / 1024
        lines.append(
            f"    bw (KB  /s): min=  304, max=  463, per=99.98%, avg={rate:g}, stdev={stdev:g}"
        )
    lines += ["  cpu          : usr=0.00%, sys=0.00%, ctx=415, majf=0, minf=34"]
    lines += ["     issued    : total=r=786/w=818/d=0, short=r=0/w=0/d=0", ""]
    lines += ["Run status group 0 (all jobs):"]
    for m in document.measurements:
        rate = f"{m.bytes_per_second / 1024:g}KB/s"
        lines.append(f"{m.op.upper():>7}: io=3144KB, aggrb={rate}, minb={rate}, maxb={rate}")
    lines += ["", "Disk stats (read/write):"]
    lines += [
        f"    {r['name']}: ios={r['read_ios']}/{r['write_ios']}, merge=0/0, util={r['util']}%"
        for r in records(document)
    ]
    return "\n".join(lines) + "\n"


def test_fio_2x_reads_as_the_same_run() -> None:
    modern = parse_text("auto", raw("fio_slow_aes_ti"), "3x.txt")
    old = parse_text("auto", fio_2x(modern), "2x.txt")
    assert values(old) == values(modern)
    assert [m.extra["bw_stdev"] for m in old.measurements] == pytest.approx(
        [m.extra["bw_stdev"] for m in modern.measurements]
    )
    assert [m.extra["storage_util"] for m in old.measurements] == [98.65, 98.65]


def test_fio_group_lines_alone_take_the_commands_block_size_and_name() -> None:
    modern = parse_text("auto", raw("fio_slow_aes_ti"), "3x.txt")
    group = [
        line for line in raw("fio_slow_aes_ti").splitlines() if re.match(r"\s*(READ|WRITE):", line)
    ]
    old = [line for line in fio_2x(modern).splitlines() if re.match(r"\s*(READ|WRITE):", line)]
    for lines in (group, old):
        post = "# fio --name=randrw --rw=randrw --bs=4k --direct=1\n" + "\n".join(lines)
        document = parse_text("auto", post, "group.txt")
        assert values(document) == pytest.approx(values(modern), rel=1e-3)


# ---------------------------------------------------------------------------------------
# openssl: -mr and -multi with an engine


@pytest.mark.parametrize("announce", ['engine "afalg" set.', 'Engine "afalg" set.'])
def test_openssl_mr_with_an_engine(announce: str) -> None:
    plain = parse_text("auto", raw("openssl_mr"), "mr.txt")
    command = "$ openssl speed -elapsed -engine afalg -mr -evp aes-128-cbc"
    document = parse_text("auto", f"{command}\n{announce}\n{raw('openssl_mr')}", "engine.txt")
    assert values(document) == values(plain)
    assert {m.driver for m in document.measurements} == {"engine:afalg"}
    assert document.tables[0].facts["mr"] is True


def test_openssl_multi_reads_the_summed_row_with_the_engine() -> None:
    text = raw("openssl_multi")
    summed = next(line for line in text.splitlines() if line.startswith("AES-128-CBC "))
    expected = [float(value[:-1]) * 1000 for value in summed.split()[1:]]
    post = f"# openssl speed -elapsed -multi 2 -engine devcrypto -evp aes-128-cbc\n{text}"
    document = parse_text("auto", post, "multi.txt")
    assert [m.bytes_per_second for m in document.measurements] == expected
    assert {m.driver for m in document.measurements} == {"engine:devcrypto"}
    assert document.tables[0].facts["multi"] == 2


# ---------------------------------------------------------------------------------------
# tcrypt as x86, arm64 and POWER kernels log it

TCRYPT_AEAD = """\
[  312.118029] tcrypt:
               testing speed of rfc4106(gcm(aes)) (rfc4106-gcm-aesni) encryption
[  312.118045] tcrypt: test 0 (160 bit key, 16 byte blocks): 1918297 operations in 1 seconds (30692752 bytes)
[  313.118051] tcrypt: test 1 (160 bit key, 64 byte blocks): 1744124 operations in 1 seconds (111623936 bytes)
[  313.201337] alg: No test for fips(ansi_cprng) (fips_ansi_cprng)
[  314.118112] tcrypt: test 2 (160 bit key, 256 byte blocks): 1207417 operations in 1 seconds (309098752 bytes)
"""  # noqa: E501
TCRYPT_CYCLES = """\
testing speed of async cbc(aes) (cbc-aes-ce) encryption
tcrypt: test 0 (128 bit key, 16 byte blocks): 1 operation in 339 cycles (16 bytes)
tcrypt: test 1 (128 bit key, 64 byte blocks): 1 operation in 611 cycles (64 bytes)
"""
TCRYPT_MB = """\
Dec  6 10:00:00 p9 kernel: [  40.100000] testing speed of multibuffer ecb(aes) (p8_aes) encryption
Dec  6 10:00:01 p9 kernel: [  41.100000] tcrypt: test 0 (128 bit key, 16 byte blocks): 8000 operations in 1 seconds (128000 bytes)
Dec  6 10:00:01 p9 kernel: [  42.100000] tcrypt: test 1 (128 bit key, 64 byte blocks): 4000 operations in 1 seconds (256000 bytes)
"""  # noqa: E501
TCRYPT_HASH = """\
tcrypt: testing speed of async sha256 (sha256-ce)
tcrypt: test  0 (   16 byte blocks,   16 bytes per update,   1 updates):  2158412 opers/sec,  34534592 bytes/sec
tcrypt: test  1 (   64 byte blocks,   16 bytes per update,   4 updates):   587342 opers/sec,  37589888 bytes/sec
tcrypt: test  2 (   64 byte blocks,   64 bytes per update,   1 updates):  1581263 opers/sec, 101200832 bytes/sec
"""  # noqa: E501
TCRYPT_NSECS = """\
tcrypt: testing speed of async cbc(aes) (cbc-aes-aesni) encryption
tcrypt: test 0 (128 bit key, 16 byte blocks): 1 operation in 64 nsecs (16 bytes)
tcrypt: test 1 (128 bit key, 4096 byte blocks): 1 operation in 2048 nsecs (4096 bytes)
"""  # tcrypt timed with ktime_get() (2026): nanoseconds instead of cycles


def test_tcrypt_aead_lines_with_timestamps_and_other_messages() -> None:
    document = parse_text("auto", TCRYPT_AEAD, "aead.txt")
    assert values(document) == {
        (0, "rfc4106(gcm(aes))", 160, 16, "encrypt"): 30692752.0,
        (0, "rfc4106(gcm(aes))", 160, 64, "encrypt"): 111623936.0,
        (0, "rfc4106(gcm(aes))", 160, 256, "encrypt"): 309098752.0,
    }
    assert {m.driver for m in document.measurements} == {"rfc4106-gcm-aesni"}


def test_tcrypt_cycles_are_kept_as_records_without_a_clock() -> None:
    document = parse_text("auto", TCRYPT_CYCLES, "cycles.txt")
    assert document.measurements == []
    assert [
        (r["block_size"], r["cycles_per_operation"], r["key_bits"]) for r in records(document)
    ] == [
        (16, 339, 128),
        (64, 611, 128),
    ]


def test_tcrypt_multibuffer_from_a_power_syslog() -> None:
    document = parse_text("auto", TCRYPT_MB, "mb.txt")
    assert values(document) == {
        (0, "ecb(aes)", 128, 16, "encrypt"): 128000.0,
        (0, "ecb(aes)", 128, 64, "encrypt"): 256000.0,
    }
    assert {m.extra["tcrypt_mode"] for m in document.measurements} == {"multibuffer"}


def test_tcrypt_hash_updates_and_nanoseconds() -> None:
    hashes = parse_text("auto", TCRYPT_HASH, "hash.txt")
    assert values(hashes) == {
        (0, "sha256", None, 16, "digest"): 34534592.0,
        (0, "sha256", None, 64, "update-16"): 37589888.0,
        (0, "sha256", None, 64, "digest"): 101200832.0,
    }
    nsecs = parse_text("auto", TCRYPT_NSECS, "nsecs.txt")
    assert values(nsecs) == pytest.approx(
        {
            (0, "cbc(aes)", 128, 16, "encrypt"): 16 / 64e-9,
            (0, "cbc(aes)", 128, 4096, "encrypt"): 4096 / 2048e-9,
        }
    )


def test_one_tcrypt_table_per_header_and_wrapped_lines_rejoined() -> None:
    wrapped = TCRYPT_AEAD.replace(" (30692752 bytes)", "\n(30692752 bytes)").replace(
        "operations in 1 seconds (111623936", "operations in 1\nseconds (111623936"
    )
    document = parse_text("auto", "On the test box:\n" + wrapped + TCRYPT_CYCLES, "two.txt")
    assert [table.tool for table in document.tables] == ["tcrypt", "tcrypt"]
    assert [table.label for table in document.tables] == ["On the test box:"] * 2
    assert len(document.tables[0].measurements) == 3
    assert len(document.tables[1].records) == 2


# ---------------------------------------------------------------------------------------
# the Kirkwood case: storage-bound whatever file each run came from


def results_of(text: str, name: str) -> Results:
    return to_results(parse_text("auto", text, name))


def test_compare_says_storage_bound_for_two_runs_the_disk_decided() -> None:
    # the same slow-disk recordings, the way people keep them: one file per run, even in
    # two formats (human output and fio's JSON)
    generic = results_of(raw("fio_slow_aes_generic"), "arm.txt")
    fixed_time = results_of(raw("fio_slow_aes_ti_json"), "cesa.json.txt")
    hw_sw = compare.compare_hw_sw(generic, fixed_time)
    assert hw_sw.comparisons and all(c.storage_bound for c in hw_sw.comparisons)
    assert not any(c.failed for c in hw_sw.comparisons)
    assert hw_sw.crossover == {} and hw_sw.storage_bound == ["randrw"]
    regression = compare.compare(generic, fixed_time, max_drop=0.0)
    assert regression and all(c.storage_bound for c in regression)
    assert not compare.any_failed(regression)
    # the same files in one post: the parser's own finding agrees
    both = parse_text("auto", raw("fio_slow_aes_generic") + raw("fio_slow_aes_ti"), "both")
    assert [finding.kind for finding in both.findings] == ["storage-bound"]


def test_a_fast_disk_is_judged_on_the_cipher() -> None:
    generic = results_of(raw("fio_loop_aes_generic"), "a.txt")
    fixed_time = results_of(raw("fio_loop_aes_ti"), "b.txt")
    hw_sw = compare.compare_hw_sw(generic, fixed_time)
    assert hw_sw.comparisons and not any(c.storage_bound for c in hw_sw.comparisons)
    assert any(c.failed for c in hw_sw.comparisons)  # fixed-time is 2.6x slower here


def test_a_busy_disk_that_ran_slower_is_still_judged() -> None:
    generic = results_of(raw("fio_slow_aes_generic"), "a.txt")
    slower = results_of(raw("fio_slow_aes_ti"), "b.txt")
    for measurement in slower.measurements:
        measurement.bytes_per_second *= 0.5
    hw_sw = compare.compare_hw_sw(generic, slower)
    assert not any(c.storage_bound for c in hw_sw.comparisons)
    assert all(c.failed for c in hw_sw.comparisons)


def test_the_compare_command_prints_storage_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("fio_slow_aes_generic", "fio_slow_aes_ti"):
        main(["parse", "auto", str(RAW / f"{name}.txt"), "--json"])
        (tmp_path / f"{name}.json").write_text(capsys.readouterr().out, encoding="utf-8")
    sw, hw = tmp_path / "fio_slow_aes_generic.json", tmp_path / "fio_slow_aes_ti.json"
    assert main(["compare", "--sw", str(sw), "--hw", str(hw)]) == 0
    out = capsys.readouterr().out
    assert "storage-bound" in out and "crossover 4096" not in out and ": ok" not in out
    assert main(["compare", str(sw), str(hw), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert all(item["storage_bound"] for item in data["comparisons"])
    # the key is documented: a reader checking the output against the shipped schema
    schema = json_schema(COMPARE_SCHEMA_FILE)
    jsonschema.Draft202012Validator(schema).validate(data)
    item_properties = schema["properties"]["comparisons"]["items"]["properties"]
    assert "storage_bound" in item_properties


# ---------------------------------------------------------------------------------------
# prompts, italics and units in the prose around a table


def test_short_prompts_italic_paragraphs_and_units_in_prose() -> None:
    rows = raw("qemu_cryptsetup_single")
    post = f"A 1 core cpu at 833Mhz:\npw~# cryptsetup benchmark -c aes-xts -s 512\n{rows}"
    document = parse_text("auto", post, "prompt.txt")
    assert document.tables[0].command is not None
    assert document.tables[0].command.flags["key-size"] == "512"
    assert document.tables[0].label == "A 1 core cpu at 833Mhz:"
    italic = "*$ cryptsetup benchmark -c aes-xts -s 512\n" + rows.rstrip("\n") + "*\n"
    slanted = parse_text("auto", italic, "italic.txt")
    assert values(slanted) == values(parse_text("auto", rows, "rows.txt"))
    assert slanted.tables[0].command is not None


def test_compare_says_what_each_file_holds_when_nothing_matches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    post = raw("fio_slow_aes_ti")
    renamed = post.replace("randrw:", "crypt.patched:")
    for name, text in (("a", post), ("b", renamed)):
        (tmp_path / f"{name}.txt").write_text(text, encoding="utf-8")
        main(["parse", "auto", str(tmp_path / f"{name}.txt"), "--json"])
        (tmp_path / f"{name}.json").write_text(capsys.readouterr().out, encoding="utf-8")
    a, b = str(tmp_path / "a.json"), str(tmp_path / "b.json")
    assert main(["compare", a, b]) == 2
    error = capsys.readouterr().err.strip()
    assert error.endswith(f"{a} has fio randrw; {b} has fio crypt.patched")
    assert "\n" not in error


def test_an_html_table_and_a_cipher_given_with_its_mode() -> None:
    rows = parse_text("auto", raw("qemu_cryptsetup_single"), "rows.txt").measurements
    cells = "".join(
        f"<tr><td>{m.algorithm}</td><td>{m.key_bits}b</td>"
        f"<td>{m.bytes_per_second / MIB:.1f} MiB/s</td><td>0.1 MiB/s</td></tr>"
        for m in rows
        if m.op == "encrypt"
    )
    document = parse_text("auto", f"<table>{cells}</table>", "table.html")
    assert [m.bytes_per_second for m in document.measurements if m.op == "encrypt"] == [
        m.bytes_per_second for m in rows if m.op == "encrypt"
    ]
    essiv = "aes-cbc-essiv:sha256        256b       106.8 MiB/s       112.3 MiB/s"
    [table] = parse_text("auto", essiv, "essiv.txt").tables
    assert {(m.algorithm, m.key_bits) for m in table.measurements} == {
        ("aes-cbc-essiv:sha256", 256)
    }


def test_openssl_rows_and_headers_wrapped_by_a_mailer() -> None:
    text = raw("openssl_evp")
    original = parse_text("auto", text, "raw.txt")
    wrapped = re.sub(r"(   1024 bytes) ", r"\1\n", text)
    wrapped = re.sub(r"(AES-128-CBC(?:\s+\S+k){4})\s+", r"\1\n", wrapped)
    assert wrapped.count("\n") == text.count("\n") + 2
    assert values(parse_text("auto", wrapped, "wrapped.txt")) == values(original)


def test_fio_sync_latency_lines_do_not_end_the_run() -> None:
    lines = raw("fio_slow_aes_ti").splitlines()
    cpu = next(n for n, line in enumerate(lines) if line.lstrip().startswith("cpu"))
    lines[cpu:cpu] = [
        "  fsync/fdatasync/sync_file_range:",
        "    sync (nsec): min=120, max=4511, avg=265.03, stdev=122.47",
        "    sync percentiles (nsec):",
        "     |  1.00th=[  131],  5.00th=[  145], 10.00th=[  155], 20.00th=[  175],",
    ]
    document = parse_text("auto", "\n".join(lines), "sync.txt")
    assert [m.extra["storage_util"] for m in document.measurements] == [98.65, 98.65]


def test_a_table_cut_into_an_encryption_and_a_decryption_part() -> None:
    rows = parse_text("auto", raw("qemu_cryptsetup"), "raw.txt").measurements
    parts = []
    for op, word in (("encrypt", "Encryption"), ("decrypt", "Entschlüsselung")):
        parts.append(f"# {op}ion:\n#  Algorithm | Key |  {word}")
        parts += [
            f"{m.algorithm:>12} {m.key_bits:>6}b {m.bytes_per_second / MIB:10.1f} MiB/s"
            for m in rows
            if m.op == op
        ]
        parts.append("")
    document = parse_text("auto", "\n".join(parts), "split.txt")
    assert document.warnings == []
    assert [(m.extra["table"], m.op) for m in document.measurements] == [
        (0 if m.op == "encrypt" else 1, m.op) for m in sorted(rows, key=lambda m: m.op != "encrypt")
    ]
    assert {(m.algorithm, m.key_bits, m.op): m.bytes_per_second for m in document.measurements} == {
        (m.algorithm, m.key_bits, m.op): m.bytes_per_second for m in rows
    }


def test_an_engine_openssl_could_not_load_is_not_the_tables_driver() -> None:
    text = raw("openssl_evp")
    command = "# openssl speed -elapsed -engine devcrypto -evp aes-128-cbc"
    post = f'{command}\nInvalid engine "devcrypto"\n{text}'
    document = parse_text("auto", post, "invalid.txt")
    assert values(document) == values(parse_text("auto", text, "raw.txt"))
    assert {m.driver for m in document.measurements} == {None}
    assert document.warnings == [
        "invalid.txt:2: openssl could not load engine devcrypto ('Invalid engine'); "
        "this run measured openssl's own code"
    ]


def test_fio_job_lines_without_their_header_from_fio_1x_and_2x() -> None:
    post = "\n".join(
        [
            "**Unpatched**",
            "read : io=102120KB, bw=618740 B/s, iops=151 , runt=169006msec",
            "slat (usec): min=275 , max=87560 , avg=6571.88, stdev=2799.57",
            "write: io=102680KB, bw=2048KB/s, iops=151 , runt=169006msec",
        ]
    )
    document = parse_text("auto", post, "old.txt")
    assert values(document) == {
        (0, "all jobs", None, None, "read"): 618740.0,
        (0, "all jobs", None, None, "write"): 2048 * 1024.0,
    }
    assert document.tables[0].label == "Unpatched"
    latency = document.measurements[0].extra["latency_usec"]["slat"]
    assert latency == {"min": 275.0, "max": 87560.0, "avg": 6571.88, "stdev": 2799.57}


def test_fio_unified_rw_reporting_is_one_mixed_direction() -> None:
    lines = raw("fio_slow_aes_ti").splitlines()
    job = next(n for n, line in enumerate(lines) if "(groupid=" in line)
    post = "\n".join(
        [*lines[: job + 1], "  mixed: IOPS=200, BW=800KiB/s (819kB/s)(6416KiB/8019msec)"]
    )
    [measurement] = parse_text("auto", post, "mixed.txt").measurements
    assert (measurement.op, measurement.block_size) == ("mixed", 4096)
    assert measurement.bytes_per_second == 800 * 1024


def test_an_indented_fio_2x_run_and_numbered_group_lines_of_several_runs() -> None:
    modern = parse_text("auto", raw("fio_slow_aes_ti"), "3x.txt")
    old = fio_2x(modern).replace("fio-2.2.10", "2.0.8")  # fio 2.0 printed a bare version
    indented = "\n".join("\t" + line if line else line for line in old.splitlines())
    document = parse_text("auto", indented, "tab.txt")
    assert values(document) == values(modern)
    assert [m.extra["storage_util"] for m in document.measurements] == [98.65, 98.65]
    listed = "\n".join(
        ["Four workers:", *(f"{n} - READ: io=1MB, aggrb={n}00KB/s, minb=1KB/s" for n in (1, 2))]
    )
    runs = parse_text("auto", listed, "runs.txt")
    assert [(t.label, [m.bytes_per_second for m in t.measurements]) for t in runs.tables] == [
        ("Four workers:", [100 * 1024.0]),
        ("Four workers:", [200 * 1024.0]),
    ]


def test_equal_lines_above_the_first_changed_one_belong_to_the_side_by_side_block() -> None:
    lines = [f"{'left ' + str(n):<30}   right {n}" for n in range(2)]
    lines += [f"{'left ' + str(n):<30} | right {n}" for n in range(2, 4)]
    unfolded = normalise.unfold_columns(["diff -y a b", *lines])
    assert [text for _, text in unfolded] == [
        "diff -y a b",
        *(f"left {n}" for n in range(4)),
        *(f"right {n}" for n in range(4)),
    ]
    assert [index for index, _ in unfolded] == [0, 1, 2, 3, 4, 1, 2, 3, 4]
