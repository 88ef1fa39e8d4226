# SPDX-License-Identifier: MIT
"""Every setting of the plugin, and the one place that decides where its value comes from.

Precedence, highest first: command line > HWCRYPTO_* environment > ini `hwcrypto_*` >
board profile `[settings]` > default. Each setting is declared once, as a field of the
frozen `Options` dataclass; its option name, environment variable, ini key, help text and
its role for a virtual board are all derived from that declaration, and code reads the
typed value (`options.budget` is a float) instead of looking a name up.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from pytest_hwcrypto.kernel.classify import split_top_level
from pytest_hwcrypto.measure.parallel import DEFAULT_CONCURRENCY, parse_concurrency_levels
from pytest_hwcrypto.measure.plan import MIN_SAMPLES
from pytest_hwcrypto.target.spec import TargetSpec, parse_target
from pytest_hwcrypto.verdict.blocksizes import parse_block_size_list, parse_size
from pytest_hwcrypto.vocabulary import (
    DEFAULT_BLOCK_SIZES,
    DEFAULT_DMCRYPT_BYTES,
    DEFAULT_MAX_DROP,
    DEFAULT_MAX_SAMPLES,
    DEFAULT_SESSIONS,
    DEFAULT_TIMEOUT_SECONDS,
    MAX_SESSIONS,
    BoardKind,
    Suite,
)

if TYPE_CHECKING:
    from pytest_hwcrypto.measure.load import LoadSpec

SUITES: tuple[Suite, ...] = tuple(Suite)
VM_KINDS = BoardKind.values()


class SettingError(ValueError):
    """A setting has a value that cannot be used; the message names where it came from."""


def parse_suites(text: str) -> tuple[Suite, ...]:
    """Only suites that exist: a name of a suite still to come is an error, not a no-op."""
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [name for name in names if name not in Suite.values()]
    if unknown:
        raise ValueError(
            f"unknown suite {', '.join(unknown)} (choose from {', '.join(Suite.values())})"
        )
    return tuple(Suite(name) for name in names) or SUITES


# The characters of kernel algorithm names: sha3-256, rfc4106(gcm(aes)), ecb(cipher_null),
# authenc(hmac(sha256),cbc(aes)). Anything else (a space, a quote) is a typo.
ALGORITHM_NAME = re.compile(r"[A-Za-z0-9_.()\-,]+")


def parse_algorithms(text: str) -> tuple[str, ...]:
    """Kernel algorithm names split on the commas between them, not those inside one
    (`cbc(aes),authenc(hmac(sha256),cbc(aes))` is two names); empty: every algorithm."""
    names = split_top_level(text.strip()) if text.strip() else []
    if names is None:
        raise ValueError("the parentheses do not balance")
    names = [name.strip() for name in names]
    for name in names:
        if not name:
            raise ValueError("an empty name between commas")
        if not ALGORITHM_NAME.fullmatch(name) or name.startswith("(") or "()" in name:
            raise ValueError(f"{name!r} is not a kernel algorithm name like cbc(aes) or sha256")
    return tuple(dict.fromkeys(names))


def parse_vm(text: str) -> BoardKind | None:
    if text in ("", "none", "host"):
        return None
    if text not in VM_KINDS:
        raise ValueError(f"unknown virtual board {text!r} (choose {' or '.join(VM_KINDS)})")
    return BoardKind(text)


def parse_kcidb_origin(text: str) -> str:
    """A KCIDB origin (the CI system's name): `[a-z0-9_]+`, as kcidb-io's schema says."""
    if not re.fullmatch(r"[a-z0-9_]+", text):
        raise ValueError("a KCIDB origin is lower-case letters, digits and '_' only")
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


def parse_sample_count(text: str) -> int:
    value = int(text)
    if value < MIN_SAMPLES:
        raise ValueError(f"must be {MIN_SAMPLES} or more (no median interval below that)")
    return value


def parse_session_count(text: str) -> int:
    value = int(text)
    if not 1 <= value <= MAX_SESSIONS:
        raise ValueError(f"must be 1 to {MAX_SESSIONS}")
    return value


def parse_volume_bytes(text: str) -> int:
    """A pattern size for dm-crypt volumes: whole MiB ('256M', '16MiB', '1G')."""
    value = parse_size(text)
    if value <= 0 or value % (1024 * 1024):
        raise ValueError("must be a positive whole number of MiB (e.g. 16M, 256M, 1G)")
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


def parse_load(text: str) -> LoadSpec | None:
    """A LoadSpec or None; imported here so only a session that sets it pays for it."""
    from pytest_hwcrypto.measure.load import parse_load_spec

    return parse_load_spec(text)


class BoardRole(enum.Enum):
    """What a setting means to `--hwcrypto-vm`, which reruns the session inside a board."""

    PASSED = "passed"  # given to the inner session as it is
    CHOOSES_BOARD = "chooses-board"  # used by the outer session only: which board, how long
    INPUT_FILE = "input-file"  # a file the inner session reads: copied into the board
    RESULT_FILE = "result-file"  # a file the inner session writes: copied back out


@dataclass(frozen=True)
class Setting:
    name: str
    help: str
    default: Any
    parse: Callable[[str], Any]
    metavar: str = "VALUE"
    in_profile: bool = True  # can a board profile's [settings] table set it?
    board_role: BoardRole = BoardRole.PASSED
    flag: bool = False  # on the command line a bare switch (`--hwcrypto-x`), no value

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


def _setting(
    help: str,
    parse: Callable[[str], Any],
    metavar: str,
    default: Any = None,
    *,
    in_profile: bool = True,
    board_role: BoardRole = BoardRole.PASSED,
    flag: bool = False,
) -> Any:
    """A field of Options that carries everything else `Setting` needs."""
    return dataclasses.field(
        default=default,
        metadata={
            "setting": {
                "help": help,
                "parse": parse,
                "metavar": metavar,
                "in_profile": in_profile,
                "board_role": board_role,
                "flag": flag,
            }
        },
    )


@dataclass(frozen=True)
class Options:
    """The resolved value of every setting, typed. One field per setting, in help order."""

    suite: tuple[Suite, ...] = _setting(
        "shipped suites to run, comma separated: " + ",".join(Suite.values()),
        parse_suites,
        "NAMES",
        SUITES,
    )
    algorithm: tuple[str, ...] = _setting(
        "test only these algorithms, kernel names comma separated (cbc(aes),xts(aes)); the "
        "suites that test by kernel name (inventory, correctness, throughput, cryptodev, "
        "dmcrypt) leave the others out (default: every algorithm)",
        parse_algorithms,
        "NAMES",
        (),
    )
    board: str | None = _setting(
        "board profile (TOML): expected drivers, rules, waivers, settings",
        parse_text,
        "PROFILE.toml",
        in_profile=False,
        board_role=BoardRole.INPUT_FILE,
    )
    vm: BoardKind | None = _setting(
        "run the session inside a virtual board: uml, qemu, qemu-arm64 or qemu-armhf "
        "(default: this kernel)",
        parse_vm,
        "uml|qemu|qemu-arm64|qemu-armhf",
        board_role=BoardRole.CHOOSES_BOARD,
    )
    kernel: str | None = _setting(
        "kernel image the virtual board boots (default: Debian's), or debian:<version> to "
        "fetch Debian's package (debian:7.3.4+deb13-amd64)",
        parse_text,
        "PATH",
        board_role=BoardRole.CHOOSES_BOARD,
    )
    modules: str | None = _setting(
        "modules directory for --hwcrypto-kernel (lib/modules/<release>)",
        parse_text,
        "DIR",
        board_role=BoardRole.CHOOSES_BOARD,
    )
    third_party: str | None = _setting(
        "directory holding the third-party module sources the QEMU board builds "
        "(cryptodev-linux-*.tar.gz for --hwcrypto-cryptodev); default: shared/third_party "
        "beside a source checkout",
        parse_text,
        "DIR",
        board_role=BoardRole.CHOOSES_BOARD,
    )
    vm_timeout: float = _setting(
        "seconds before a virtual board is ended",
        parse_positive_float,
        "SECONDS",
        1800.0,
        board_role=BoardRole.CHOOSES_BOARD,
    )
    timeout: float = _setting(
        "seconds one kernel crypto operation may take before it fails",
        parse_positive_float,
        "SECONDS",
        DEFAULT_TIMEOUT_SECONDS,
    )
    json: str | None = _setting(
        "write results (inventory, measurements, findings, verdicts) to this file",
        parse_text,
        "PATH",
        in_profile=False,
        board_role=BoardRole.RESULT_FILE,
    )
    html: str | None = _setting(
        "write a self-contained HTML report (tables, plots, findings, verdicts) to this file",
        parse_text,
        "PATH",
        in_profile=False,
        board_role=BoardRole.RESULT_FILE,
    )
    artifacts: str = _setting(
        "directory for board console logs and other artifacts",
        parse_text,
        "DIR",
        "hwcrypto-artifacts",
    )
    fuzz_iterations: int = _setting(
        "random cases per driver in the correctness suite", parse_non_negative_int, "N", 8
    )
    seed: int | None = _setting(
        "seed of the random cases (default: a new one, printed)", parse_optional_int, "N"
    )
    budget: float = _setting(
        "seconds the throughput suite may spend measuring", parse_positive_float, "SECONDS", 60.0
    )
    max_samples: int = _setting(
        "most samples per throughput series: past it a larger budget makes samples longer, "
        "not more; more narrow the verdicts' intervals, but not a board's drift between "
        "runs, so raise it for baselines judged with --hwcrypto-relative-to",
        parse_sample_count,
        "N",
        DEFAULT_MAX_SAMPLES,
    )
    sessions: int = _setting(
        "sessions per driver a throughput series is spread over, used in turn round by "
        "round, so one session that stays slow (seen under QEMU/TCG) moves a minority of "
        "the samples, not the median; 1 measures each driver through one session",
        parse_session_count,
        "N",
        DEFAULT_SESSIONS,
    )
    block_sizes: tuple[int, ...] = _setting(
        "block sizes the throughput suite measures (bytes; 4K, 64K allowed)",
        parse_block_size_list,
        "LIST",
        DEFAULT_BLOCK_SIZES,
    )
    concurrency: tuple[int, ...] = _setting(
        "requests in flight the throughput suites measure each driver at (AF_ALG: N "
        "threads, each an op socket of one transform; /dev/crypto: a session per thread), "
        "e.g. 1,4,16; offload engines only show their worth with several",
        parse_concurrency_levels,
        "LIST",
        DEFAULT_CONCURRENCY,
    )
    load: LoadSpec | None = _setting(
        "background load while measuring: cpu:N busy-loop processes (like stress -c N)",
        parse_load,
        "cpu:N",
    )
    baseline: str | None = _setting(
        "results JSON (or pytest-benchmark JSON) of an earlier run: every throughput series "
        "measured again must not regress beyond --hwcrypto-max-drop",
        parse_text,
        "RESULTS.json",
        in_profile=False,
        board_role=BoardRole.INPUT_FILE,
    )
    max_drop: float = _setting(
        "largest slowdown against --hwcrypto-baseline that is not a regression (10% or 0.1)",
        parse_max_drop,
        "FRACTION",
        DEFAULT_MAX_DROP,
    )
    relative_to: str | None = _setting(
        "judge --hwcrypto-baseline as a multiple of this driver measured in the same rounds "
        "('software': the fastest generic driver), so a board slower as a whole is not a "
        "regression",
        parse_text,
        "DRIVER",
    )
    # Passed on into a board: the outer session builds and loads the module, the inner one
    # then requires /dev/crypto (its fixture fails instead of skipping when it is missing),
    # as on a lab board that must have it.
    cryptodev: bool = _setting(
        "/dev/crypto is required: on --hwcrypto-vm=qemu, build cryptodev-linux for the "
        "board's kernel and load it; elsewhere, fail instead of skipping without it",
        parse_bool,
        "BOOL",
        False,
        flag=True,
    )
    # Passed on into a board likewise. The drivers are wrong or slow on purpose: only the
    # QEMU board builds and loads them; a session on a real kernel never loads them itself.
    test_drivers: bool = _setting(
        "load the test-only drivers of pytest_hwcrypto/kmod (wrong or slow on purpose, to prove "
        "the suites catch them): on --hwcrypto-vm=qemu, build them for the board's kernel and "
        "load them; elsewhere, use them only if already loaded, with a warning",
        parse_bool,
        "BOOL",
        False,
        flag=True,
    )

    strict: bool = _setting(
        "a regression rule whose max_drop is below the drop its run could detect "
        "(the samples' spread) fails instead of passing with a warning",
        parse_bool,
        "BOOL",
        False,
        flag=True,
    )

    # None: decided at run time (on when LAVA's helper or environment is there).
    lava: bool | None = _setting(
        "report every test and measurement as a LAVA test case (lava-test-case, or the "
        "<LAVA_SIGNAL_...> lines without it); default: on when lava-test-case is on PATH "
        "or LAVA_* variables are set",
        parse_bool,
        "BOOL",
        None,
        flag=True,
    )

    kcidb: str | None = _setting(
        "write the run as KernelCI KCIDB I/O data (schema v5.3: checkout, build, one test "
        "per test, measurement and rule) to this file",
        parse_text,
        "PATH",
        in_profile=False,
        board_role=BoardRole.RESULT_FILE,
    )
    kcidb_origin: str = _setting(
        "the KCIDB origin (your CI system's name, [a-z0-9_]+) of --hwcrypto-kcidb's objects",
        parse_kcidb_origin,
        "NAME",
        "hwcrypto",
    )

    dmcrypt_bytes: int = _setting(
        "bytes of seeded pattern the dmcrypt suite writes through each volume and reads "
        "back (whole MiB: 16M, 256M, 1G)",
        parse_volume_bytes,
        "SIZE",
        DEFAULT_DMCRYPT_BYTES,
    )

    # Host-driven: the suites run here and drive the board through a transport.
    target: TargetSpec | None = _setting(
        "test a board driven from this host instead of this kernel: ssh://user@host[:port] "
        "(OpenSSH client) or serial:/dev/ttyX[,baud] (its console); docs/targets.md",
        parse_target,
        "ssh://user@host[:port]|serial:/dev/ttyX[,baud]",
        in_profile=False,
    )
    target_key: str | None = _setting(
        "private key for an ssh:// --hwcrypto-target (default: ssh's own choice)",
        parse_text,
        "PATH",
        in_profile=False,
    )
    history: str | None = _setting(
        "at the end of the session, add its run to this history database: an SQLite file "
        "or postgresql://... (as `hwcrypto history add`; with --hwcrypto-vm, the host adds "
        "the board's run)",
        parse_text,
        "DB",
        in_profile=False,
    )
    history_gate: bool = _setting(
        "with --hwcrypto-history: after the run is added, judge its board's history "
        "(as `hwcrypto history detect`) and fail the session when the newest kernel is a "
        "change point with a drop beyond --hwcrypto-max-drop",
        parse_bool,
        "BOOL",
        False,
        flag=True,
        in_profile=False,
    )

    def chooses(self, algorithm: str | None) -> bool:
        """Is `algorithm` to be tested? Every one is without --hwcrypto-algorithm; None (a
        rule or check about no one algorithm) always is."""
        return not self.algorithm or algorithm is None or algorithm in self.algorithm

    @classmethod
    def from_resolved(cls, resolved: Mapping[str, Resolved]) -> Options:
        return cls(**{name: setting.value for name, setting in resolved.items()})


SETTINGS: tuple[Setting, ...] = tuple(
    Setting(name=field.name, default=field.default, **field.metadata["setting"])
    for field in dataclasses.fields(Options)
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
