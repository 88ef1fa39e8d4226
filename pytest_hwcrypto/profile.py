# SPDX-License-Identifier: MIT
"""Board profiles: what a board must register and how fast its hardware path must be.

A profile is a TOML file (shape: docs/profiles.md). Loading validates
everything up front, and every error names the file, the table entry, the key and its
line, because a lab editing forty profiles needs to find the typo without a traceback.
"""

from __future__ import annotations

import fnmatch
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older board root filesystems
    import tomli as tomllib

from pytest_hwcrypto.vocabulary import PROFILE_DRIVER_CLASSES, RuleType

DRIVER_CLASSES = tuple(str(driver_class) for driver_class in PROFILE_DRIVER_CLASSES)
RULE_TYPES = RuleType.values()
_TOP_LEVEL = ("board", "expect", "rule", "waive", "settings", "containers", "classify")
_EXPECT_KEYS = ("algorithm", "driver", "class", "module", "reason", "dmcrypt")
_EXPECT_HWRNG_KEYS = ("hwrng", "reason")  # a hw_random source, not an algorithm's driver
_WAIVE_KEYS = ("driver", "container", "algorithm", "check", "reason")
_CONTAINER_KEYS = ("devices", "configs")
_CLASSIFY_KEYS = ("driver", "module", "class", "reason")


class ProfileError(ValueError):
    """A board profile cannot be used; the message is one line naming file, key and line."""


@dataclass(frozen=True)
class Expectation:
    """A driver (or a class of driver) that must be registered for an algorithm."""

    algorithm: str
    driver: str | None
    driver_class: str | None
    module: str | None
    where: str
    # `dmcrypt = true`: dm-crypt must be able to use this driver (a dmcrypt-refuses-driver
    # finding for it fails the dmcrypt suite unless a [[waive]] covers that check).
    dmcrypt: bool = False

    def describe(self) -> str:
        target = self.driver or f"a {self.driver_class} driver"
        return f"{self.algorithm} by {target}"


@dataclass(frozen=True)
class HwrngExpectation:
    """`[[expect]] hwrng = "virtio_rng.*"`: a hw_random source matching this shell-style
    glob must be registered (kernel/hwrng.py)."""

    pattern: str
    where: str

    def matches(self, name: str) -> bool:
        return fnmatch.fnmatchcase(name, self.pattern)

    def describe(self) -> str:
        return f"hwrng {self.pattern}"


@dataclass(frozen=True)
class Waiver:
    """A known failure accepted on this board, with the reason it is accepted."""

    driver: str
    reason: str
    check: str  # which check it waives: "selftest" or "*"
    algorithm: str | None = None

    def covers(self, driver: str, check: str) -> bool:
        return self.driver == driver and self.check in ("*", check)


@dataclass(frozen=True)
class ClassifyEntry:
    """`[[classify]]`: the class of drivers this board's kernel has and the table may not know.

    ``driver`` is a shell-style glob on the driver name (``ss-*``); ``module`` narrows it.
    The inventory's ``class_evidence`` then reads ``profile: [[classify]] driver = ss-*
    (board.toml:12)``.
    """

    driver: str
    driver_class: str
    where: str  # "board.toml:12"
    module: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class ContainerKeys:
    """`[containers]`: what the board's LXC containers must get, and which configs to audit."""

    devices: tuple[str, ...] = ()  # device nodes passed through, e.g. "/dev/crypto"
    configs: tuple[str, ...] | None = None  # glob patterns; None: LXC's default path


@dataclass(frozen=True)
class BoardProfile:
    path: Path
    name: str
    expectations: tuple[Expectation, ...] = ()
    rules: tuple[dict[str, Any], ...] = ()  # validated by the verdict engine, `location` added
    waivers: tuple[Waiver, ...] = ()
    settings: dict[str, Any] = field(default_factory=dict)
    containers: ContainerKeys | None = None  # [containers]; None when the table is absent
    classify: tuple[ClassifyEntry, ...] = ()  # [[classify]], in file order (first match wins)
    hwrngs: tuple[HwrngExpectation, ...] = ()  # [[expect]] entries with `hwrng`

    def waiver_for(self, driver: str, check: str) -> Waiver | None:
        return next((w for w in self.waivers if w.covers(driver, check)), None)


class _Locator:
    """Finds the line of a key inside the n-th `[[table]]` of the raw text, for messages."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()

    def where(self, table: str, index: int | None = None, key: str | None = None) -> str:
        line = self._line(table, index, key)
        entry = table if index is None else f"{table} #{index + 1}"
        location = f"{self.path}:{line}" if line else str(self.path)
        return f"{location}: [{entry}]" + (f" {key}" if key else "")

    def line_of(self, table: str, index: int | None, key: str | None) -> int | None:
        """The line of ``key`` in the ``index``-th ``[[table]]`` (its header line without key)."""
        return self._line(table, index, key)

    def _line(self, table: str, index: int | None, key: str | None) -> int | None:
        header = re.compile(
            r"^\s*\[\[\s*" + re.escape(table) + r"\s*\]\]"
            if index is not None
            else r"^\s*\[\s*" + re.escape(table) + r"\s*\]"
        )
        seen = -1
        for number, line in enumerate(self.lines, start=1):
            if not header.match(line):
                continue
            seen += 1
            if index is not None and seen != index:
                continue
            return self._key_line(number, key) if key else number
        return None

    def _key_line(self, table_line: int, key: str) -> int:
        key_pattern = re.compile(r"^\s*" + re.escape(key) + r"\s*=")
        for number in range(table_line + 1, len(self.lines) + 1):
            text = self.lines[number - 1]
            if re.match(r"^\s*\[", text):
                break
            if key_pattern.match(text):
                return number
        return table_line


def load_profile(path: Path | str) -> BoardProfile:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProfileError(f"board profile {path} not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ProfileError(f"board profile {path} cannot be read: {error}") from None
    return parse_profile(text, path)


def parse_profile(text: str, path: Path) -> BoardProfile:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ProfileError(f"{path}: not valid TOML: {error}") from None
    locate = _Locator(path, text)
    unknown = sorted(set(data) - set(_TOP_LEVEL))
    if unknown:
        raise ProfileError(
            f"{path}: unknown table {unknown[0]!r} (expected one of {', '.join(_TOP_LEVEL)})"
        )
    board = _table(data, "board", locate)
    name = board.get("name")
    if not isinstance(name, str) or not name:
        raise ProfileError(
            f"{locate.where('board', key='name')}: a board name (string) is required"
        )
    settings = _table(data, "settings", locate)
    expects = list(enumerate(_array(data, "expect", locate)))
    return BoardProfile(
        path=path,
        name=name,
        expectations=tuple(_expectation(e, i, locate) for i, e in expects if "hwrng" not in e),
        rules=tuple(_rule(r, i, locate) for i, r in enumerate(_array(data, "rule", locate))),
        waivers=tuple(_waiver(w, i, locate) for i, w in enumerate(_array(data, "waive", locate))),
        settings=dict(settings),
        containers=_containers(data, locate),
        classify=tuple(
            _classify(c, i, locate) for i, c in enumerate(_array(data, "classify", locate))
        ),
        hwrngs=tuple(_hwrng_expectation(e, i, locate) for i, e in expects if "hwrng" in e),
    )


def _table(data: dict[str, Any], name: str, locate: _Locator) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise ProfileError(f"{locate.path}: {name} must be a table [{name}]")
    return value


def _array(data: dict[str, Any], name: str, locate: _Locator) -> list[dict[str, Any]]:
    value = data.get(name, [])
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise ProfileError(f"{locate.path}: {name} must be an array of tables [[{name}]]")
    return value


def _string(entry: dict[str, Any], key: str, where: str, required: bool = False) -> str | None:
    value = entry.get(key)
    if value is None:
        if required:
            raise ProfileError(f"{where}: missing required key {key!r}")
        return None
    if not isinstance(value, str) or not value:
        raise ProfileError(f"{where}: {key} must be a non-empty string, got {value!r}")
    return value


def _reject_unknown_keys(
    entry: dict[str, Any], allowed: tuple[str, ...], table: str, index: int, locate: _Locator
) -> None:
    for key in entry:
        if key not in allowed:
            raise ProfileError(
                f"{locate.where(table, index, key)}: unknown key (allowed: {', '.join(allowed)})"
            )


def _expectation(entry: dict[str, Any], index: int, locate: _Locator) -> Expectation:
    _reject_unknown_keys(entry, _EXPECT_KEYS, "expect", index, locate)
    where = locate.where("expect", index)
    algorithm = _string(entry, "algorithm", where, required=True)
    driver = _string(entry, "driver", locate.where("expect", index, "driver"))
    driver_class = _string(entry, "class", locate.where("expect", index, "class"))
    if driver is None and driver_class is None:
        raise ProfileError(f"{where}: give a driver or a class for {algorithm}")
    if driver_class is not None and driver_class not in DRIVER_CLASSES:
        raise ProfileError(
            f"{locate.where('expect', index, 'class')}: unknown class "
            f"{driver_class!r} (choose from {', '.join(DRIVER_CLASSES)})"
        )
    module = _string(entry, "module", locate.where("expect", index, "module"))
    dmcrypt = entry.get("dmcrypt", False)
    if not isinstance(dmcrypt, bool):
        raise ProfileError(
            f"{locate.where('expect', index, 'dmcrypt')}: dmcrypt must be true or false, "
            f"got {dmcrypt!r}"
        )
    if dmcrypt and driver is None:
        raise ProfileError(
            f"{locate.where('expect', index, 'dmcrypt')}: dmcrypt = true needs a driver "
            "(which driver must dm-crypt be able to use?)"
        )
    assert algorithm is not None
    return Expectation(algorithm, driver, driver_class, module, where, dmcrypt)


def _hwrng_expectation(entry: dict[str, Any], index: int, locate: _Locator) -> HwrngExpectation:
    _reject_unknown_keys(entry, _EXPECT_HWRNG_KEYS, "expect", index, locate)
    pattern = _string(entry, "hwrng", locate.where("expect", index, "hwrng"), required=True)
    assert pattern is not None
    return HwrngExpectation(pattern, locate.where("expect", index))


def _containers(data: dict[str, Any], locate: _Locator) -> ContainerKeys | None:
    if "containers" not in data:
        return None
    table = _table(data, "containers", locate)
    unknown = sorted(set(table) - set(_CONTAINER_KEYS))
    if unknown:
        raise ProfileError(
            f"{locate.where('containers', key=unknown[0])}: unknown key {unknown[0]!r} "
            f"(known: {', '.join(_CONTAINER_KEYS)})"
        )
    lists: dict[str, tuple[str, ...]] = {}
    for key in _CONTAINER_KEYS:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ProfileError(
                f"{locate.where('containers', key=key)}: {key} must be a list of strings"
            )
        lists[key] = tuple(value)
    for device in lists["devices"]:
        if not device.startswith("/dev/"):
            raise ProfileError(
                f"{locate.where('containers', key='devices')}: {device!r} is not under /dev"
            )
    return ContainerKeys(
        devices=lists["devices"], configs=lists["configs"] if "configs" in table else None
    )


def _classify(entry: dict[str, Any], index: int, locate: _Locator) -> ClassifyEntry:
    _reject_unknown_keys(entry, _CLASSIFY_KEYS, "classify", index, locate)
    where = locate.where("classify", index)
    driver = _string(entry, "driver", where, required=True)
    driver_class = _string(entry, "class", where, required=True)
    if driver_class not in DRIVER_CLASSES:
        raise ProfileError(
            f"{locate.where('classify', index, 'class')}: unknown class "
            f"{driver_class!r} (choose from {', '.join(DRIVER_CLASSES)})"
        )
    module = _string(entry, "module", locate.where("classify", index, "module"))
    reason = _string(entry, "reason", locate.where("classify", index, "reason"))
    assert driver is not None and driver_class is not None
    line = locate.line_of("classify", index, "driver")
    place = f"{locate.path}:{line}" if line else str(locate.path)
    return ClassifyEntry(driver, driver_class, place, module, reason)


def _waiver(entry: dict[str, Any], index: int, locate: _Locator) -> Waiver:
    _reject_unknown_keys(entry, _WAIVE_KEYS, "waive", index, locate)
    where = locate.where("waive", index)
    # A container config's path stands where a driver's name does (its findings' subject).
    if "container" in entry and "driver" not in entry:
        entry = {**entry, "driver": entry["container"]}
    driver = _string(entry, "driver", where, required=True)
    reason = _string(entry, "reason", where, required=True)
    check = _string(entry, "check", locate.where("waive", index, "check")) or "*"
    algorithm = _string(entry, "algorithm", locate.where("waive", index, "algorithm"))
    assert driver is not None and reason is not None
    return Waiver(driver=driver, reason=reason, check=check, algorithm=algorithm)


def _rule(entry: dict[str, Any], index: int, locate: _Locator) -> dict[str, Any]:
    where = locate.where("rule", index)
    rule_type = _string(entry, "type", where, required=True)
    if rule_type not in RULE_TYPES:
        raise ProfileError(
            f"{locate.where('rule', index, 'type')}: unknown rule type "
            f"{rule_type!r} (choose from {', '.join(RULE_TYPES)})"
        )
    return {**entry, "location": where}
