"""Every setting of the plugin, and the one place that decides where its value comes from.

Precedence, highest first: command line > HWCRYPTO_* environment > ini `hwcrypto_*` >
board profile `[settings]` > default. Each setting is declared once here; its option
name, environment variable, ini key and help text are all derived from that declaration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable

from pytest_hwcrypto.verdict.blocksizes import parse_block_size_list

SUITES = ("inventory", "correctness", "throughput", "dmcrypt", "lxc", "userspace")
VM_KINDS = ("uml", "qemu")


class SettingError(ValueError):
    """A setting has a value that cannot be used; the message names where it came from."""


def parse_suites(text: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [name for name in names if name not in SUITES]
    if unknown:
        raise ValueError(f"unknown suite {', '.join(unknown)} (choose from {', '.join(SUITES)})")
    return names or SUITES


def parse_vm(text: str) -> str | None:
    if text in ("", "none", "host"):
        return None
    if text not in VM_KINDS:
        raise ValueError(f"unknown virtual board {text!r} (choose uml or qemu)")
    return text


def parse_positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise ValueError("must be greater than 0")
    return value


def parse_non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError("must be 0 or more")
    return value


def parse_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off", ""):
        return False
    raise ValueError("must be true or false")


def parse_text(text: str) -> str:
    return text


def parse_optional_int(text: str) -> int | None:
    return None if text in ("", "random") else int(text)


def parse_max_drop(text: str) -> float:
    from pytest_hwcrypto.verdict.compare import parse_fraction

    return parse_fraction(text)


def parse_load(text: str) -> Any:
    """A LoadSpec or None; imported here so only a session that sets it pays for it."""
    from pytest_hwcrypto.measure.load import parse_load_spec

    return parse_load_spec(text)


@dataclass(frozen=True)
class Setting:
    name: str
    help: str
    default: Any
    parse: Callable[[str], Any]
    metavar: str = "VALUE"
    in_profile: bool = True  # can a board profile's [settings] table set it?

    @property
    def option(self) -> str:
        return "--hwcrypto-" + self.name.replace("_", "-")

    @property
    def env(self) -> str:
        return "HWCRYPTO_" + self.name.upper()

    @property
    def ini(self) -> str:
        return "hwcrypto_" + self.name

    @property
    def dest(self) -> str:
        return "hwcrypto_" + self.name


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "suite",
        "shipped suites to run, comma separated: " + ",".join(SUITES),
        SUITES,
        parse_suites,
        "NAMES",
    ),
    Setting(
        "board",
        "board profile (TOML): expected drivers, rules, waivers, settings",
        None,
        parse_text,
        "PROFILE.toml",
        in_profile=False,
    ),
    Setting(
        "vm",
        "run the session inside a virtual board: uml or qemu (default: this kernel)",
        None,
        parse_vm,
        "uml|qemu",
    ),
    Setting(
        "kernel",
        "kernel image the virtual board boots (default: Debian's)",
        None,
        parse_text,
        "PATH",
    ),
    Setting(
        "modules",
        "modules directory for --hwcrypto-kernel (lib/modules/<release>)",
        None,
        parse_text,
        "DIR",
    ),
    Setting(
        "vm_timeout",
        "seconds before a virtual board is ended",
        1800.0,
        parse_positive_float,
        "SECONDS",
    ),
    Setting(
        "timeout",
        "seconds one kernel crypto operation may take before it fails",
        10.0,
        parse_positive_float,
        "SECONDS",
    ),
    Setting(
        "json",
        "write results (inventory, measurements, findings, verdicts) to this file",
        None,
        parse_text,
        "PATH",
        in_profile=False,
    ),
    Setting(
        "artifacts",
        "directory for board console logs and other artifacts",
        "hwcrypto-artifacts",
        parse_text,
        "DIR",
    ),
    Setting(
        "fuzz_iterations",
        "random cases per driver in the correctness suite",
        8,
        parse_non_negative_int,
        "N",
    ),
    Setting(
        "seed",
        "seed of the random cases (default: a new one, printed)",
        None,
        parse_optional_int,
        "N",
    ),
    Setting(
        "budget",
        "seconds the throughput suite may spend measuring",
        60.0,
        parse_positive_float,
        "SECONDS",
    ),
    Setting(
        "block_sizes",
        "block sizes the throughput suite measures (bytes; 4K, 64K allowed)",
        parse_block_size_list("16,64,256,1024,4096,16384,65536"),
        parse_block_size_list,
        "LIST",
    ),
    Setting(
        "load",
        "background load while measuring: cpu:N busy-loop processes (like stress -c N)",
        None,
        parse_load,
        "cpu:N",
    ),
    Setting(
        "baseline",
        "results JSON (or pytest-benchmark JSON) of an earlier run: every throughput series "
        "measured again must not regress beyond --hwcrypto-max-drop",
        None,
        parse_text,
        "RESULTS.json",
        in_profile=False,
    ),
    Setting(
        "max_drop",
        "largest slowdown against --hwcrypto-baseline that is not a regression (10% or 0.1)",
        0.10,
        parse_max_drop,
        "FRACTION",
    ),
    Setting("lava", "emit LAVA test-case signals", False, parse_bool, "BOOL"),
)

SETTINGS_BY_NAME = {setting.name: setting for setting in SETTINGS}


COMMAND_LINE = "command line"


@dataclass(frozen=True)
class Resolved:
    value: Any
    source: str  # "command line", "environment HWCRYPTO_X", "ini hwcrypto_x", "profile", "default"


def resolve(
    setting: Setting,
    *,
    cli_value: Any,
    environ: Mapping[str, str],
    ini_value: str | None,
    profile_settings: Mapping[str, Any],
    profile_name: str = "board profile",
) -> Resolved:
    """Pick the value of one setting by precedence and parse it; errors name the source."""
    if cli_value is not None:
        return Resolved(_parse(setting, cli_value, f"option {setting.option}"), COMMAND_LINE)
    if setting.env in environ:
        source = f"environment {setting.env}"
        return Resolved(_parse(setting, environ[setting.env], source), source)
    if ini_value not in (None, ""):
        source = f"ini {setting.ini}"
        return Resolved(_parse(setting, str(ini_value), source), source)
    if setting.in_profile and setting.name in profile_settings:
        source = f"{profile_name} [settings] {setting.name}"
        raw = profile_settings[setting.name]
        return Resolved(_parse(setting, _profile_text(raw), source), source)
    return Resolved(setting.default, "default")


def _profile_text(raw: Any) -> str:
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, (list, tuple)):
        return ",".join(str(item) for item in raw)
    return str(raw)


def _parse(setting: Setting, raw: Any, source: str) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        return setting.parse(raw)
    except ValueError as error:
        raise SettingError(f"{source}={raw!r}: {error}") from None


def resolve_all(
    *,
    cli_values: Mapping[str, Any],
    environ: Mapping[str, str],
    ini_values: Mapping[str, str | None],
    profile_settings: Mapping[str, Any],
    profile_name: str = "board profile",
) -> dict[str, Resolved]:
    return {
        setting.name: resolve(
            setting,
            cli_value=cli_values.get(setting.name),
            environ=environ,
            ini_value=ini_values.get(setting.name),
            profile_settings=profile_settings,
            profile_name=profile_name,
        )
        for setting in SETTINGS
    }
