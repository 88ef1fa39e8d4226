# SPDX-License-Identifier: MIT
"""modprobe: blacklist / disabling install entries in modprobe.d and on the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.kernel.modprobe import (
    BLACKLIST,
    DEFAULT_MODPROBE_DIRS,
    INSTALL,
    MODULE_BLACKLIST,
    BlacklistEntry,
    entries_for,
    find_blacklisted_modules,
    is_blacklisted,
    load_module_quietly,
    modprobe_conf_files,
    normalize_module_name,
    parse_cmdline_blacklist,
    parse_modprobe_conf,
)

# The ThinkPad case (a user report): AES-NI switched off, so dm-crypt fell to software.
THINKPAD = """\
# disable hardware AES to compare with software
blacklist aesni-intel
blacklist ghash_clmulni_intel  # trailing words are ignored by modprobe

install crc32c-intel /bin/false
install padlock_aes /usr/bin/true
install sha256_ssse3 /bin/true --with-arguments
  # indented comment
install virtio_crypto /sbin/modprobe --ignore-install virtio_crypto && echo loaded
options aesni_intel foo=1
blacklist
alias crypto-aes aes_generic
"""

# Debian's real /lib/modprobe.d/fbdev-blacklist.conf starts like this.
DEBIAN_FBDEV = """\
# This file blacklists most old-style PCI framebuffer drivers.

blacklist arkfb
blacklist aty128fb
"""


def modules(entries: list[BlacklistEntry]) -> list[tuple[str, int, str]]:
    return [(entry.module, entry.line, entry.kind) for entry in entries]


def test_blacklist_and_disabling_install_lines_with_their_line_numbers() -> None:
    entries = parse_modprobe_conf(THINKPAD, "/etc/modprobe.d/aes.conf")
    assert modules(entries) == [
        ("aesni_intel", 2, BLACKLIST),
        ("ghash_clmulni_intel", 3, BLACKLIST),
        ("crc32c_intel", 5, INSTALL),
        ("padlock_aes", 6, INSTALL),
        ("sha256_ssse3", 7, INSTALL),
    ]
    assert all(entry.file == "/etc/modprobe.d/aes.conf" for entry in entries)
    assert entries[2].command == "/bin/false" and entries[0].command is None


def test_install_blocks_explicit_loads_blacklist_does_not() -> None:
    entries = parse_modprobe_conf(THINKPAD)
    assert [entry.blocks_explicit_load for entry in entries] == [False, False, True, True, True]


def test_describe_names_module_rule_and_place() -> None:
    (entry,) = parse_modprobe_conf("install aesni_intel /bin/false\n", "x.conf")
    assert entry.describe() == (
        "aesni_intel disabled by 'install aesni_intel /bin/false' at x.conf:1"
    )
    (entry,) = parse_modprobe_conf("\nblacklist aesni_intel\n", "y.conf")
    assert entry.describe() == "aesni_intel disabled by 'blacklist' at y.conf:2"
    assert entry.location == "y.conf:2"


def test_continuation_lines_join_and_keep_the_first_line_number() -> None:
    text = "# x\ninstall aesni_intel \\\n    /bin/false\nblacklist \\\nsha1_ssse3\n"
    assert modules(parse_modprobe_conf(text)) == [
        ("aesni_intel", 2, INSTALL),
        ("sha1_ssse3", 4, BLACKLIST),
    ]


def test_continuation_at_end_of_file_is_still_read() -> None:
    assert modules(parse_modprobe_conf("blacklist \\\naes_ti \\")) == [("aes_ti", 1, BLACKLIST)]


def test_comments_blank_lines_and_other_commands_give_nothing() -> None:
    text = "#blacklist aesni_intel\n\n   \n# blacklist x\nsoftdep a pre: b\n"
    assert parse_modprobe_conf(text) == []


def test_debian_fbdev_excerpt() -> None:
    assert modules(parse_modprobe_conf(DEBIAN_FBDEV)) == [
        ("arkfb", 3, BLACKLIST),
        ("aty128fb", 4, BLACKLIST),
    ]


@pytest.mark.parametrize("name", ["aesni-intel", "aesni_intel", " aesni-intel "])
def test_dash_and_underscore_are_the_same(name: str) -> None:
    entries = parse_modprobe_conf("blacklist aesni-intel\n")
    assert normalize_module_name(name) == "aesni_intel"
    assert is_blacklisted(entries, name)
    assert entries_for(entries, name) == entries
    assert not is_blacklisted(entries, "aes_generic")


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text)
    return path


def test_files_in_earlier_directories_override_same_name_later_and_order_is_by_name(
    tmp_path: Path,
) -> None:
    etc, usr = tmp_path / "etc", tmp_path / "usr"
    write(usr, "aes.conf", "blacklist aesni_intel\n")
    write(etc, "aes.conf", "blacklist aes_ti\n")  # overrides the /usr one entirely
    write(usr, "00-first.conf", "blacklist sha1_ssse3\n")
    write(etc, "zz.conf", "install padlock_sha /bin/false\n")
    write(etc, "notes.txt", "blacklist ignored_not_conf\n")
    write(etc, ".hidden.conf", "blacklist ignored_hidden\n")
    (etc / "dir.conf").mkdir()
    dirs = [etc, tmp_path / "absent", usr]
    assert modprobe_conf_files(dirs) == [usr / "00-first.conf", etc / "aes.conf", etc / "zz.conf"]
    found = find_blacklisted_modules(dirs)
    assert [(entry.module, entry.file) for entry in found] == [
        ("sha1_ssse3", str(usr / "00-first.conf")),
        ("aes_ti", str(etc / "aes.conf")),
        ("padlock_sha", str(etc / "zz.conf")),
    ]


def test_missing_directories_give_nothing(tmp_path: Path) -> None:
    assert find_blacklisted_modules([tmp_path / "nope"]) == []


def test_default_directories_follow_kmod_priority() -> None:
    assert DEFAULT_MODPROBE_DIRS[0] == Path("/etc/modprobe.d")
    assert set(DEFAULT_MODPROBE_DIRS) >= {
        Path("/etc/modprobe.d"),
        Path("/lib/modprobe.d"),
        Path("/usr/lib/modprobe.d"),
        Path("/run/modprobe.d"),
    }


def test_cmdline_blacklists() -> None:
    cmdline = (
        "BOOT_IMAGE=/vmlinuz root=/dev/sda1"
        " modprobe.blacklist=aesni-intel,ghash_clmulni_intel"
        ' quiet module_blacklist=virtio_crypto, title="a b"\n'
    )
    entries = parse_cmdline_blacklist(cmdline)
    assert modules(entries) == [
        ("aesni_intel", 1, BLACKLIST),
        ("ghash_clmulni_intel", 1, BLACKLIST),
        ("virtio_crypto", 1, MODULE_BLACKLIST),
    ]
    assert entries[0].file == "/proc/cmdline"
    assert entries[2].blocks_explicit_load and not entries[0].blocks_explicit_load


def test_cmdline_with_unbalanced_quote_still_splits() -> None:
    entries = parse_cmdline_blacklist('title="x module_blacklist=aes_ti')
    assert modules(entries) == [("aes_ti", 1, MODULE_BLACKLIST)]


def test_cmdline_without_blacklist() -> None:
    assert parse_cmdline_blacklist("console=ttyS0 quiet -- --init-arg") == []


@pytest.mark.skipif(
    not Path("/lib/modprobe.d/fbdev-blacklist.conf").exists(),
    reason="needs Debian's /lib/modprobe.d/fbdev-blacklist.conf",
)
def test_this_hosts_modprobe_configuration() -> None:
    found = find_blacklisted_modules()
    assert is_blacklisted(found, "arkfb")
    # /lib is a symlink to /usr/lib on merged-/usr systems: each file is read once.
    assert len([entry for entry in found if entry.module == "arkfb"]) == 1


def test_modules_are_loaded_through_one_function() -> None:
    """Loading a module quietly is written once, in kernel/modprobe.py (issue 43): no other
    module of the package or the suites runs `modprobe -q` itself."""
    root = Path(__file__).resolve().parents[2]
    sources = [*(root / "pytest_hwcrypto").rglob("*.py"), *(root / "suites").rglob("*.py")]
    home = root / "pytest_hwcrypto" / "kernel" / "modprobe.py"
    own_calls = [
        str(path.relative_to(root))
        for path in sources
        if path != home and '"modprobe", "-q"' in path.read_text()
    ]
    assert own_calls == []


def test_a_module_that_cannot_load_is_quiet(capfd: pytest.CaptureFixture[str]) -> None:
    """A failed load is an expected outcome for its callers: it raises nothing, prints
    nothing (here modprobe, if the host has it, really runs and finds no such module)."""
    load_module_quietly("hwcrypto-no-such-module")
    assert capfd.readouterr() == ("", "")
