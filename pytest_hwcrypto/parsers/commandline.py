# SPDX-License-Identifier: MIT
"""Recognise the command line above a table and read its flags (pure: text in, Command out).

People paste the command with its prompt (`$ `, `[root@host ~]# `, `root@box:~# `) more
often than not, and its flags decide how to read the table: `openssl speed -evp` versus
the legacy names, `-elapsed` versus CPU time, `-engine NAME`, `-multi N`, `-mr`; or
`cryptsetup benchmark --cipher aes-xts --key-size 512`; or fio's `--bs=4k --rw=randrw`.

Only commands of the tools this package reads are recognised (optionally after `sudo`,
`time`, `env VAR=...`, `nice`, `taskset MASK`); anything else after a prompt is left as a
plain line, so it can still be a table's label.
"""

from __future__ import annotations

import re
import shlex

from pytest_hwcrypto.parsers.tables import Command

# A shell prompt at the start of a line: the part is dropped, the rest kept.
_PROMPTS = (
    r"\[[^\]\n]{1,80}\]\s?[#$%]\s*",  # [root@host ~]#   [user@box dir]$
    r"[\w.-]+@[\w.-]+(?::[^\s#$%]*|\s+[^\s#$%]+)?\s?[#$%]\s*",  # root@box:~#  me@pc ~ $
    r"[\w.-]+:[~/][^\s#$%]*\s?[#$%]\s*",  # box:~#
    r"(?:ba|z|da)?sh-\d[\d.]*\s?[#$%]\s*",  # bash-5.2$  sh-4.4#
    r"[$%]\s+",  # "$ " and zsh's "% "
    r"[$%](?=[a-z])",  # "$openssl" (prompt with the blank lost)
)
_PROMPT = re.compile(r"^\s*(?:\([\w.-]+\)\s*)?(?:" + "|".join(_PROMPTS) + ")")
# "# " is root's prompt, but also cryptsetup's header and a markdown heading: only a
# known command after it makes it a prompt.
_ROOT_HASH = re.compile(r"^\s*#\s*")
# any other short prompt ('pw~# ', 'OpenWrt$ ', 'board% '): only before a known command
_SHORT_PROMPT = re.compile(r"^\s*[^\s#$%]{1,40}[#$%]\s+")
_WRAPPERS = {"sudo", "time", "nice", "command", "exec", "doas"}
_WRAPPERS_WITH_ARGUMENT = {"taskset", "chrt", "numactl", "ionice"}
PROGRAMS = {
    "openssl": "openssl",
    "cryptsetup": "cryptsetup",
    "fio": "fio",
    "modprobe": "tcrypt",
    "insmod": "tcrypt",
    "dmesg": "tcrypt",
}
_SUBCOMMANDS = {"openssl": "speed", "cryptsetup": "benchmark"}
# single-dash openssl speed options that take a value; every other -word is a switch
_OPENSSL_VALUED = {
    "engine",
    "evp",
    "multi",
    "bytes",
    "seconds",
    "async_jobs",
    "misalign",
    "primes",
    "hmac",
    "cmac",
    "provider",
    "provider-path",
    "propquery",
    "kem-algorithms",
    "signature-algorithms",
    "rand",
    "writerand",
    "mb",
}
# cryptsetup's short options and those of its long ones that take a value
_CRYPTSETUP_SHORT = {"c": "cipher", "s": "key-size", "h": "hash", "i": "iter-time"}
_CRYPTSETUP_VALUED = {
    "cipher",
    "key-size",
    "hash",
    "iter-time",
    "pbkdf",
    "pbkdf-memory",
    "pbkdf-parallel",
    "pbkdf-force-iterations",
    "sector-size",
}


def strip_prompt(line: str) -> tuple[str, bool]:
    """The line without a leading shell prompt, and whether there was one."""
    match = _PROMPT.match(line)
    if match and match.end() > 0:
        return line[match.end() :], True
    for pattern in (_ROOT_HASH, _SHORT_PROMPT):
        prompt = pattern.match(line)
        if prompt and parse_command(line[prompt.end() :]) is not None:
            return line[prompt.end() :], True
    return line, False


def parse_command(text: str) -> Command | None:
    """A Command when `text` runs one of the known tools, else None."""
    words = _split(text)
    position = _skip_wrappers(words)
    if position >= len(words):
        return None
    program = words[position].rsplit("/", 1)[-1]
    if program not in PROGRAMS:
        return None
    rest = words[position + 1 :]
    if program in ("modprobe", "insmod") and not any("tcrypt" in word for word in rest):
        return None
    subcommand = None
    wanted = _SUBCOMMANDS.get(program)
    if wanted is not None:
        if wanted not in rest:
            return None
        rest = [word for word in rest if word != wanted]
        subcommand = wanted
    command = Command(text=text.strip(), program=program, subcommand=subcommand)
    _read_flags(command, _until_pipe(rest))
    return command


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=False)
    except ValueError:  # an unbalanced quote in a pasted line
        return text.split()


def _skip_wrappers(words: list[str]) -> int:
    position = 0
    while position < len(words):
        word = words[position]
        if word in _WRAPPERS or re.fullmatch(r"[A-Za-z_]\w*=\S*", word) or word == "env":
            position += 1
        elif _is_wrapper_script(words, position):
            position += 1  # ./util/wrap.pl -fips ./apps/openssl speed ...
        elif word in _WRAPPERS_WITH_ARGUMENT:
            position += 2
        elif word.startswith("-") and position > 0:  # sudo -E, nice -n 5 (value skipped)
            position += 1
        else:
            break
    return position


def _is_wrapper_script(words: list[str], position: int) -> bool:
    """A script run before the tool ('./util/wrap.pl'), when a tool's path follows it."""
    word = words[position]
    if "/" not in word or word.rsplit("/", 1)[-1] in PROGRAMS:
        return False
    later = [w.rsplit("/", 1)[-1] for w in words[position + 1 :] if not w.startswith("-")]
    return bool(later) and later[0] in PROGRAMS


def _until_pipe(words: list[str]) -> list[str]:
    for index, word in enumerate(words):
        if word in ("|", "||", "&&", ";", ">", ">>", "2>&1") or word.startswith(("|", ">")):
            return words[:index]
    return words


def _read_flags(command: Command, words: list[str]) -> None:
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word.startswith("--") and len(word) > 2:
            name, equals, value = word[2:].partition("=")
            if equals:
                command.flags[name] = value
            elif (
                command.program == "cryptsetup"
                and name in _CRYPTSETUP_VALUED
                and index < len(words)
            ):
                command.flags[name] = words[index]
                index += 1
            else:
                command.flags[name] = True
        elif word.startswith("-") and len(word) > 1 and not _is_number(word):
            name = word[1:]
            if command.program == "cryptsetup" and name in _CRYPTSETUP_SHORT:
                name = _CRYPTSETUP_SHORT[name]
                valued = True
            else:
                valued = command.program == "openssl" and name in _OPENSSL_VALUED
            if valued and index < len(words):
                command.flags[name] = words[index]
                index += 1
            else:
                command.flags[name] = True
        else:
            command.arguments.append(word)


def _is_number(word: str) -> bool:
    return re.fullmatch(r"-\d+(?:\.\d+)?", word) is not None
