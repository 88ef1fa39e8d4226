# SPDX-License-Identifier: MIT
"""Find kernel modules that modprobe configuration keeps from loading.

Two ways to disable a module are recognised, as kmod reads them:

* ``blacklist NAME``: modprobe ignores the module's aliases, so it is not auto-loaded
  (crypto modules are mostly loaded through aliases such as ``crypto-xts(aes)`` or a CPU
  feature); an explicit ``modprobe NAME`` still loads it;
* ``install NAME /bin/false`` (or ``true``): modprobe runs that command instead of
  loading, so even an explicit ``modprobe NAME`` does nothing.

Also the kernel command line: ``modprobe.blacklist=a,b`` (read by modprobe like
``blacklist``) and ``module_blacklist=a,b`` (enforced by the kernel for every load).

Files follow kmod's rules: only ``*.conf`` files count; a file name present in several
directories is read from the first directory only (``/etc`` overrides ``/usr/lib``); files
are read in file-name order. Lines ending in a backslash continue on the next line, lines
whose first word starts with ``#`` are comments, and ``-`` and ``_`` in module names are the
same.

Loading a module as the plugin asks for one (`load_module_quietly`) lives here too, so that
every place that needs a module first goes through the same call.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

# Where modprobe lives when PATH lacks the sbin directories (a non-root user's PATH).
MODPROBE_PLACES = ("/sbin/modprobe", "/usr/sbin/modprobe")


def load_module_quietly(module: str) -> None:
    """Ask modprobe for a module and say nothing either way.

    Callers try a load and then look for what the module provides (a device node, an
    algorithm), so a module that is missing, built in or refused is an expected outcome
    here, not an error: no output, no exception, and no wait past 30 s.
    """
    tool = shutil.which("modprobe") or next(
        (path for path in MODPROBE_PLACES if os.path.exists(path)), None
    )
    if tool is None:
        return
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            [tool, "-q", module],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=30,
            check=False,
        )


# kmod's search order, highest priority first.
DEFAULT_MODPROBE_DIRS: tuple[Path, ...] = (
    Path("/etc/modprobe.d"),
    Path("/run/modprobe.d"),
    Path("/usr/local/lib/modprobe.d"),
    Path("/lib/modprobe.d"),
    Path("/usr/lib/modprobe.d"),
)

BLACKLIST = "blacklist"
INSTALL = "install"
MODULE_BLACKLIST = "module_blacklist"

# Commands that succeed or fail without loading anything.
_DISABLING_COMMANDS = frozenset({"true", "false"})
_CMDLINE_KINDS = {"modprobe.blacklist": BLACKLIST, "module_blacklist": MODULE_BLACKLIST}


@dataclass(frozen=True)
class BlacklistEntry:
    """One place that disables a module: where it is and how it does it."""

    module: str
    file: str
    line: int
    kind: str
    command: str | None = None

    @property
    def blocks_explicit_load(self) -> bool:
        """True when even ``modprobe NAME`` cannot load the module."""
        return self.kind in (INSTALL, MODULE_BLACKLIST)

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"

    def describe(self) -> str:
        how = f"install {self.module} {self.command}" if self.command else self.kind
        return f"{self.module} disabled by '{how}' at {self.location}"


def normalize_module_name(name: str) -> str:
    """Module names as the kernel keeps them: ``crc32c-intel`` is ``crc32c_intel``."""
    return name.strip().replace("-", "_")


def parse_modprobe_conf(text: str, source: str = "<modprobe.conf>") -> list[BlacklistEntry]:
    """Blacklist and disabling-install entries of one modprobe.d file."""
    entries: list[BlacklistEntry] = []
    for number, line in _logical_lines(text):
        entry = _entry_from_line(line, source, number)
        if entry is not None:
            entries.append(entry)
    return entries


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """Join backslash-continued lines; yield (number of the first physical line, text)."""
    pending: list[str] = []
    first = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not pending:
            first = number
        if raw.endswith("\\"):
            pending.append(raw[:-1])
            continue
        pending.append(raw)
        yield first, " ".join(pending)
        pending = []
    if pending:
        yield first, " ".join(pending)


def _entry_from_line(line: str, source: str, number: int) -> BlacklistEntry | None:
    words = line.split()
    if len(words) < 2 or words[0].startswith("#"):
        return None
    command, module = words[0], normalize_module_name(words[1])
    if command == BLACKLIST:
        return BlacklistEntry(module, source, number, BLACKLIST)
    if command == INSTALL and _is_disabling_command(words[2:]):
        return BlacklistEntry(module, source, number, INSTALL, " ".join(words[2:]))
    return None


def _is_disabling_command(words: Sequence[str]) -> bool:
    """``/bin/false``, ``/usr/bin/true``, ``false``...: the command does nothing at all."""
    return bool(words) and Path(words[0]).name in _DISABLING_COMMANDS


def modprobe_conf_files(dirs: Iterable[Path] = DEFAULT_MODPROBE_DIRS) -> list[Path]:
    """The ``*.conf`` files kmod reads, in the order it reads them."""
    chosen: dict[str, Path] = {}
    for directory in dirs:
        for path in _conf_files_in(directory):
            # The first directory holding a file name wins; later ones are overridden.
            chosen.setdefault(path.name, path)
    return [chosen[name] for name in sorted(chosen)]


def _conf_files_in(directory: Path) -> list[Path]:
    try:
        candidates = list(directory.iterdir())
    except OSError:
        return []
    return [
        path
        for path in candidates
        if path.name.endswith(".conf") and not path.name.startswith(".") and path.is_file()
    ]


def find_blacklisted_modules(
    dirs: Iterable[Path] = DEFAULT_MODPROBE_DIRS,
) -> list[BlacklistEntry]:
    """All blacklist/disabling-install entries in the modprobe.d directories."""
    entries: list[BlacklistEntry] = []
    for path in modprobe_conf_files(dirs):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            # An unreadable file cannot be what keeps a module away for this user either.
            continue
        entries.extend(parse_modprobe_conf(text, str(path)))
    return entries


def parse_cmdline_blacklist(cmdline: str, source: str = "/proc/cmdline") -> list[BlacklistEntry]:
    """``modprobe.blacklist=`` and ``module_blacklist=`` entries of a kernel command line."""
    entries: list[BlacklistEntry] = []
    for word in _cmdline_words(cmdline):
        key, _, value = word.partition("=")
        kind = _CMDLINE_KINDS.get(key)
        if kind is None:
            continue
        for module in value.split(","):
            if module.strip():
                entries.append(BlacklistEntry(normalize_module_name(module), source, 1, kind))
    return entries


def _cmdline_words(cmdline: str) -> list[str]:
    try:
        return shlex.split(cmdline)
    except ValueError:
        # An unbalanced quote: the kernel would still split on spaces.
        return cmdline.split()


def entries_for(entries: Iterable[BlacklistEntry], module: str) -> list[BlacklistEntry]:
    """The entries that disable ``module`` (either spelling of '-'/'_')."""
    wanted = normalize_module_name(module)
    return [entry for entry in entries if entry.module == wanted]


def is_blacklisted(entries: Iterable[BlacklistEntry], module: str) -> bool:
    return bool(entries_for(entries, module))
