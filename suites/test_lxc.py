# SPDX-License-Identifier: MIT
"""The lxc suite: crypto devices passed into LXC containers the way users do it, and the
same checks inside the container as on the host.

The suite makes two containers as the `hwcrypto_lxc` fixture does (busybox, no network,
this interpreter and the plugin bound read-only, devices passed by cgroup allow + bind
mount + autodev hook with the host's numbers): one with the board's devices allowed, one
with the same nodes made but not allowed. The checks are `container.probe` answers from a
server on each side (container/prober.py), compared:

* each device the board's containers must get (`[containers] devices`, else the crypto
  nodes present: /dev/crypto, /dev/hwrng; else /dev/loop-control standing in) is inside
  with the host's kind, major:minor and mode, opens as on the host, and is still so after
  a restart (the autodev hook); the same node made but not allowed is refused (EPERM);
* the plugin's own container configs and the board's (`[containers] configs`, else every
  config under LXC's path) restrict devices, or `container-devices-unrestricted` (fails
  unless waived with `[[waive]] container = PATH, check = "container-devices-unrestricted"`);
* AF_ALG inside: the kernel hands the container the same winner as the host, and the
  ciphertext equals pyca `cryptography`'s;
* /dev/crypto inside (when the host has it): CIOCGSESSINFO names the same driver inside
  as outside, ciphertexts equal pyca's, and preferring another driver on the host changes
  what the container gets;
* the same driver's throughput inside and outside, interleaved: `container-overhead` when
  the container is more than 5 % slower (the test fails only when clearly so);
* `openssl engine -t afalg` inside says what it says on the host.
"""

from __future__ import annotations

import contextlib
import shlex
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.container import audit, lxc
from pytest_hwcrypto.container.lxc import Container
from pytest_hwcrypto.container.prober import ContainerProber, HostProber
from pytest_hwcrypto.kernel import afalg, cryptodev
from pytest_hwcrypto.kernel.inventory import InventoryEntry, build_inventory
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.kernel.rerank import Preference
from pytest_hwcrypto.model.results import Finding, Measurement, Verdict, inventory_items
from pytest_hwcrypto.model.stats import SampleStats, ratio_interval
from pytest_hwcrypto.profile import BoardProfile
from pytest_hwcrypto.report.recorder import ResultsRecorder
from pytest_hwcrypto.run import HwcryptoRun, run_of
from pytest_hwcrypto.verdict.rules import CollectedRule, Rule, rules_from_profile
from pytest_hwcrypto.vocabulary import (
    DEFAULT_CONTAINER_OVERHEAD,
    MIB,
    PROFILE_DRIVER_CLASSES,
    FindingKind,
    Place,
    Source,
)

pytestmark = pytest.mark.hwcrypto_lxc

CRYPTO_NODES = ("/dev/crypto", "/dev/hwrng")
# A device every board with loop support has, standing in when no crypto node exists.
STAND_IN = "/dev/loop-control"
CIPHERS = ("cbc(aes)", "xts(aes)")
KEY = bytes(range(64))
IV = bytes(range(16, 32))
PLAINTEXT = bytes(range(256)) * 4
RATE_BLOCK = 65536
RATE_SECONDS = 0.4
RATE_ROUNDS = 6
RULE_ROUNDS = 3
UNRESTRICTED = FindingKind.CONTAINER_DEVICES_UNRESTRICTED


def board_devices(run: HwcryptoRun) -> list[str]:
    profile = run.profile
    if profile is not None and profile.containers is not None and profile.containers.devices:
        return list(profile.containers.devices)
    present = [node for node in CRYPTO_NODES if Path(node).exists()]
    return present or [STAND_IN]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "device" in metafunc.fixturenames:
        devices = board_devices(run_of(metafunc.config))
        metafunc.parametrize("device", devices, ids=devices)
    if "cipher" in metafunc.fixturenames:
        metafunc.parametrize("cipher", CIPHERS)
    if "container_rule" in metafunc.fixturenames:
        rules = container_rules(run_of(metafunc.config)) or [NO_CONTAINER_RULES]
        metafunc.parametrize("container_rule", rules, ids=[r.label for r in rules])


def pyca_encrypt(cipher: str, key: bytes, iv: bytes, data: bytes) -> bytes:
    mode: modes.CBC | modes.XTS = modes.XTS(iv) if cipher == "xts(aes)" else modes.CBC(iv)
    encryptor = Cipher(algorithms.AES(key), mode).encryptor()
    return encryptor.update(data) + encryptor.finalize()


def key_for(cipher: str) -> bytes:
    return KEY[:64] if cipher.startswith("xts") else KEY[:32]


def judge(
    results: ResultsRecorder, rule: str, failures: Sequence[str], passed_message: str
) -> None:
    message = "; ".join(failures) if failures else passed_message
    fixtures.record_and_judge(results, Verdict(rule, not failures, message))


@dataclass
class Sides:
    """Both sides of every comparison: the host, a container that got the board's devices
    (`allowed`), and one whose nodes are there but not allowed (`denied`)."""

    host: HostProber
    allowed: Container
    inside: ContainerProber
    denied: Container
    denied_inside: ContainerProber

    def restart_allowed(self) -> float:
        self.inside.close()
        seconds = self.allowed.restart()
        self.inside = ContainerProber(self.allowed, Path(self.allowed.spec.rootfs), "allowed")
        return seconds


@pytest.fixture(scope="module")
def sides(hwcrypto_run: HwcryptoRun) -> Iterator[Sides]:
    reason = lxc.unavailable_reason()
    if reason:
        pytest.skip(reason)
    devices = board_devices(hwcrypto_run)
    missing = [device for device in devices if not Path(device).exists()]
    if missing:
        pytest.fail(f"the board's containers must get {', '.join(missing)}, but the host has none")
    maker = lxc.ContainerMaker(fixtures.run_ledger(hwcrypto_run))
    with ExitStack() as stack:
        host = HostProber()
        stack.callback(host.close)
        try:
            allowed = stack.enter_context(maker.container(devices))
            denied = stack.enter_context(maker.container([], refused=devices))
            both = Sides(
                host,
                allowed,
                ContainerProber(allowed, Path(allowed.spec.rootfs), "allowed"),
                denied,
                ContainerProber(denied, Path(denied.spec.rootfs), "denied"),
            )
        except (lxc.ContainerError, ValueError) as error:
            pytest.fail(f"cannot start the suite's containers: {error}", pytrace=False)
        # Probers close before their containers go (an ExitStack unwinds newest first).
        stack.callback(lambda: both.inside.close())
        stack.callback(both.denied_inside.close)
        yield both


# --- devices ------------------------------------------------------------------------------


def test_device_is_inside_with_the_hosts_numbers_and_survives_a_restart(
    device: str, sides: Sides, hwcrypto_results: ResultsRecorder
) -> None:
    host = sides.host.ask("node", device)
    failures = []
    for when in ("started", "restarted"):
        seen = sides.inside.ask("node", device)
        for key in ("kind", "numbers", "mode", "open"):
            if seen.get(key) != host.get(key):
                failures.append(f"{when}: {key} inside {seen.get(key)!r}, host {host.get(key)!r}")
        if when == "started":
            sides.restart_allowed()
    starts = ", ".join(f"{seconds:.2f}" for seconds in sides.allowed.start_seconds)
    judge(
        hwcrypto_results,
        f"lxc-device {device}",
        failures,
        f"{device} inside as on the host ({host['kind']} {host['numbers']} {host['mode']}, "
        f"open {host['open']}), also after a restart (lxc-start: {starts} s)",
    )


def test_device_not_allowed_is_refused_even_with_its_node(
    device: str, sides: Sides, hwcrypto_results: ResultsRecorder
) -> None:
    node = sides.host.ask("node", device)
    if "error" in node:
        pytest.fail(f"{device}: {node['error']}")
    seen = sides.denied_inside.ask("node", device)
    kind, numbers = node["kind"], node["numbers"].split(":")
    made = sides.denied_inside.ask("mknod", "/tmp/hwcrypto-node", kind, *numbers)
    failures = []
    if seen.get("numbers") != node["numbers"]:
        failures.append(f"the hook and bind did not make the node: {seen}")
    if seen.get("open") != "EPERM":
        failures.append(f"open of the node inside gave {seen.get('open')!r}, not EPERM")
    if made.get("open", made.get("mknod")) != "EPERM":
        failures.append(f"a node mknod'ed inside: {made}, not EPERM")
    judge(
        hwcrypto_results,
        f"lxc-refused {device}",
        failures,
        f"{device} not allowed: its node is there and open gives EPERM; mknod inside: "
        f"{made.get('mknod')}",
    )


def test_container_configs_restrict_devices(
    sides: Sides, hwcrypto_profile: BoardProfile | None, hwcrypto_results: ResultsRecorder
) -> None:
    keys = hwcrypto_profile.containers if hwcrypto_profile else None
    patterns = [str(sides.allowed.config_path), str(sides.denied.config_path)]
    patterns += (
        list(keys.configs) if keys and keys.configs is not None else audit.default_patterns()
    )
    failures: list[str] = []
    waived: list[str] = []
    for path in audit.unrestricted_configs(patterns):
        detail = f"{path} has no device policy: its container gets every host device"
        waiver = hwcrypto_profile.waiver_for(str(path), UNRESTRICTED) if hwcrypto_profile else None
        hwcrypto_results.add_finding(
            Finding(
                UNRESTRICTED,
                "",
                detail + (f" (waived: {waiver.reason})" if waiver else ""),
                {"config": str(path)},
            )
        )
        (waived if waiver else failures).append(detail)
    judge(
        hwcrypto_results,
        "lxc-device-policy",
        failures,
        f"every container config restricts devices ({', '.join(patterns)})"
        + (f"; waived: {len(waived)}" if waived else ""),
    )


# --- AF_ALG -----------------------------------------------------------------------------


def test_afalg_inside_gets_the_hosts_winner(
    cipher: str, sides: Sides, hwcrypto_results: ResultsRecorder
) -> None:
    args = ("afalg", cipher, key_for(cipher).hex(), IV.hex(), PLAINTEXT.hex())
    host = sides.host.ask(*args)
    if "error" in host:
        pytest.skip(f"{cipher} through AF_ALG on the host: {host['error']}")
    seen = sides.inside.ask(*args)
    expected = pyca_encrypt(cipher, key_for(cipher), IV, PLAINTEXT).hex()
    failures = []
    if seen.get("driver") != host["driver"]:
        failures.append(f"inside got {seen.get('driver')!r} ({seen}), host {host['driver']!r}")
    if seen.get("out") != expected:
        failures.append(
            f"the ciphertext of {seen.get('driver')} inside differs from pyca cryptography's"
        )
    judge(
        hwcrypto_results,
        f"lxc-afalg {cipher}",
        failures,
        f"{cipher} inside and on the host: {host['driver']} ({host['evidence']}), "
        "ciphertext equal to pyca's",
    )


# --- /dev/crypto --------------------------------------------------------------------------


def cbc_drivers(inventory: Sequence[InventoryEntry]) -> list[str]:
    """The cbc(aes) drivers a session could get: registered, not internal, self-tested."""
    return sorted(
        {
            e.driver
            for e in inventory
            if e.name == "cbc(aes)" and not e.alg.internal and e.alg.selftest != "unknown"
        }
    )


def dev_crypto_inside(sides: Sides) -> bool:
    return any(node.path == str(cryptodev.DEV_CRYPTO) for node in sides.allowed.spec.devices)


def test_cryptodev_inside_reports_the_hosts_driver_and_follows_reranking(
    sides: Sides,
    hwcrypto_prefer: Callable[[str], Preference],
    hwcrypto_inventory: list[InventoryEntry],
    hwcrypto_results: ResultsRecorder,
) -> None:
    reason = cryptodev.unavailable_reason()
    if reason:
        pytest.skip(reason)
    if not dev_crypto_inside(sides):
        pytest.skip("/dev/crypto is not among the board's [containers] devices")
    args = ("cryptodev", "cbc(aes)", KEY[:32].hex(), IV.hex(), PLAINTEXT.hex())
    expected = pyca_encrypt("cbc(aes)", KEY[:32], IV, PLAINTEXT).hex()
    failures: list[str] = []
    seen_drivers: list[str] = []

    def compare(label: str, preferred: str | None) -> str | None:
        host, seen = sides.host.ask(*args), sides.inside.ask(*args)
        seen_drivers.append(f"{label}: {seen.get('driver')}")
        if "error" in host or "error" in seen:
            failures.append(f"{label}: host {host}, inside {seen}")
            return None
        if seen["driver"] != host["driver"]:
            failures.append(
                f"{label}: CIOCGSESSINFO inside {seen['driver']}, host {host['driver']}"
            )
        if preferred is not None and seen["driver"] != preferred:
            failures.append(f"{label}: the container got {seen['driver']}, not {preferred}")
        wrong = [
            f"{side} ({answer['driver']})"
            for side, answer in (("inside", seen), ("host", host))
            if answer["out"] != expected
        ]
        if wrong:
            failures.append(
                f"{label}: the ciphertext {' and '.join(wrong)} differs from pyca cryptography's"
            )
        return str(seen["driver"])

    winner = compare("as registered", None)
    for driver in [d for d in cbc_drivers(hwcrypto_inventory) if d != winner]:
        hwcrypto_prefer(driver)
        compare(f"{driver} preferred on the host", driver)
    judge(
        hwcrypto_results,
        "lxc-cryptodev cbc(aes)",
        failures,
        "CIOCGSESSINFO inside = host, ciphertext = pyca's; " + "; ".join(seen_drivers),
    )


# --- throughput ---------------------------------------------------------------------------


def rate_paths(sides: Sides) -> list[tuple[str, ...]]:
    """What to time: the AF_ALG winner of cbc(aes) by its driver name, and /dev/crypto's
    cbc(aes) when the container got it."""
    paths: list[tuple[str, ...]] = []
    host = sides.host.ask("afalg", "cbc(aes)", KEY[:32].hex(), IV.hex(), PLAINTEXT.hex())
    if "driver" in host:
        paths.append(("afalg-rate", host["driver"], str(RATE_BLOCK), str(RATE_SECONDS)))
    if cryptodev.unavailable_reason() is None and dev_crypto_inside(sides):
        paths.append(("cryptodev-rate", "cbc(aes)", str(RATE_BLOCK), str(RATE_SECONDS)))
    return paths


def interleaved_rates(
    sides: Sides, args: Sequence[str]
) -> tuple[list[float], list[float], set[str]]:
    """RATE_ROUNDS rounds of one sample per side, host first in even rounds and the
    container first in odd ones (so a cost of going first or second falls on both sides):
    bytes/s on each side, and the drivers that served."""
    host_rates: list[float] = []
    inside_rates: list[float] = []
    drivers: set[str] = set()
    for round_number in range(RATE_ROUNDS):
        order: list[tuple[list[float], HostProber | ContainerProber]] = [
            (host_rates, sides.host),
            (inside_rates, sides.inside),
        ]
        for rates, prober in order if round_number % 2 == 0 else order[::-1]:
            answer = prober.ask(*args)
            if "error" in answer:
                pytest.fail(f"{args[0]}: {answer['error']}", pytrace=False)
            rates.append(float(answer["bytes_per_second"]))
            drivers.add(str(answer["driver"]))
    return host_rates, inside_rates, drivers


def test_throughput_inside_is_within_the_overhead_bar(
    pytestconfig: pytest.Config, sides: Sides, hwcrypto_results: ResultsRecorder
) -> None:
    reason = fixtures.concurrent_measuring_reason(pytestconfig, "lxc")
    if reason:
        pytest.skip(reason)
    paths = rate_paths(sides)
    if not paths:
        pytest.skip("neither AF_ALG cbc(aes) nor /dev/crypto works on this kernel")
    failures, lines = [], []
    for args in paths:
        host_rates, inside_rates, drivers = interleaved_rates(sides, args)
        host_stats = SampleStats.from_samples(host_rates)
        inside_stats = SampleStats.from_samples(inside_rates)
        ratio = ratio_interval(inside_stats, host_stats)
        overhead = 1.0 - ratio.ratio
        source = args[0].removesuffix("-rate")
        line = (
            f"{source} {','.join(sorted(drivers))} {RATE_BLOCK} B: inside "
            f"{inside_stats.median / MIB:.1f} MiB/s, host {host_stats.median / MIB:.1f} MiB/s, "
            f"overhead {overhead:+.1%} (ratio {ratio.low:.3f}..{ratio.high:.3f})"
        )
        lines.append(line)
        extra = {
            "source": source,
            "drivers": sorted(drivers),
            "block_size": RATE_BLOCK,
            "overhead": overhead,
            "inside_bytes_per_second": inside_rates,
            "host_bytes_per_second": host_rates,
        }
        if overhead > DEFAULT_CONTAINER_OVERHEAD:
            hwcrypto_results.add_finding(
                Finding(FindingKind.CONTAINER_OVERHEAD, "cbc(aes)", line, extra)
            )
        if ratio.clearly_below(1.0 - DEFAULT_CONTAINER_OVERHEAD):
            failures.append(line)
    print("\n".join(lines))
    judge(hwcrypto_results, "lxc-overhead cbc(aes)", failures, "; ".join(lines))


# --- the board profile's rules about containers ------------------------------------------


def container_rules(run: HwcryptoRun) -> list[CollectedRule]:
    """The profile's `[[rule]]`s with `where = "container"` (the throughput suite skips them)."""
    return [
        c
        for c in rules_from_profile(run.profile)
        if c.rule is None or c.rule.scope.place == Place.CONTAINER
    ]


def named_drivers(rule: Rule) -> list[str]:
    """The driver names (not classes) a rule's sides or target give."""
    sides = [getattr(rule, attribute, None) for attribute in ("hw", "sw", "target", "driver")]
    return [s for s in sides if isinstance(s, str) and s not in PROFILE_DRIVER_CLASSES]


def measure_inside(
    sides: Sides, algorithm: str, source: str, prefer: Callable[[str], Preference]
) -> list[Measurement]:
    """Every driver of `algorithm` timed inside the container through `source` (AF_ALG by
    exact driver name; /dev/crypto with the driver preferred on the host), interleaved,
    each a Measurement marked `where = container`."""
    inventory = build_inventory(read_proc_crypto(fixtures.PROC_CRYPTO))
    drivers = sorted({e.driver: e.driver_class for e in inventory if e.name == algorithm}.items())
    rates: dict[str, list[float]] = {driver: [] for driver, _ in drivers}
    for _ in range(RULE_ROUNDS):
        for driver, _ in drivers:
            if source == Source.CRYPTODEV:
                prefer(driver)
                answer = sides.inside.ask(
                    "cryptodev-rate", algorithm, str(RATE_BLOCK), str(RATE_SECONDS)
                )
            else:
                answer = sides.inside.ask("afalg-rate", driver, str(RATE_BLOCK), str(RATE_SECONDS))
            if answer.get("driver") == driver:
                rates[driver].append(float(answer["bytes_per_second"]))
    measurements = []
    for driver, driver_class in drivers:
        if not rates[driver]:
            continue  # not reachable through this path (masked, refused, not preferable)
        stats = SampleStats.from_samples(rates[driver])
        measurements.append(
            Measurement(
                source=source,
                algorithm=algorithm,
                driver=driver,
                key_bits=256,
                block_size=RATE_BLOCK,
                op="encrypt",
                bytes_per_second=stats.median,
                samples=rates[driver],
                ci_low=stats.ci_low,
                ci_high=stats.ci_high,
                cov=stats.cov,
                driver_class=driver_class,
                extra={"where": Place.CONTAINER},
            )
        )
    return measurements


def test_profile_rule_inside_the_container(
    container_rule: CollectedRule,
    pytestconfig: pytest.Config,
    sides: Sides,
    hwcrypto_prefer: Callable[[str], Preference],
    hwcrypto_results: ResultsRecorder,
) -> None:
    if container_rule.rule is None:
        if container_rule.label == NO_CONTAINER_RULES.label:
            pytest.skip(
                'no [[rule]] with where = "container" in the board profile (or no profile): '
                "nothing to judge inside the container; add such a rule to --hwcrypto-board "
                "to hold the container's numbers to it"
            )
        pytest.fail(container_rule.error or "invalid rule", pytrace=False)
    reason = fixtures.concurrent_measuring_reason(pytestconfig, "lxc")
    if reason:
        pytest.skip(reason)
    rule = container_rule.rule
    algorithm = rule.scope.algorithm or "cbc(aes)"
    source = rule.scope.source or Source.AFALG
    if source not in (Source.AFALG, Source.CRYPTODEV):
        pytest.fail(f"{rule.label}: inside a container only afalg and cryptodev are measured")
    if source == Source.CRYPTODEV and not dev_crypto_inside(sides):
        pytest.fail(f"{rule.label}: the container has no /dev/crypto", pytrace=False)
    for name in named_drivers(rule):  # template instances exist once something binds them
        with contextlib.suppress(afalg.AfAlgError):
            afalg.instantiate_any(name)
    measurements = measure_inside(sides, algorithm, source, hwcrypto_prefer)
    for measurement in measurements:
        hwcrypto_results.add_measurement(measurement)
    inventory = inventory_items(
        [e.to_json() for e in build_inventory(read_proc_crypto(fixtures.PROC_CRYPTO))]
    )
    outcome = rule.evaluate(measurements, inventory)
    fixtures.record_and_judge(hwcrypto_results, outcome.verdict, outcome.findings)


NO_CONTAINER_RULES = CollectedRule("no-container-rules", None)


# --- OpenSSL --------------------------------------------------------------------------------


def test_openssl_afalg_engine_inside_sees_what_the_host_sees(
    sides: Sides, hwcrypto_results: ResultsRecorder
) -> None:
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed: apt-get install openssl")
    command = ["openssl", "engine", "-t", "afalg"]
    host = subprocess.run(command, capture_output=True, text=True, check=False)
    # stdout only on both sides: stderr carries pids and paths that differ by nature.
    seen = sides.allowed.run(shlex.join(command) + " 2>/dev/null")
    host_lines = [line.strip() for line in host.stdout.splitlines() if line.strip()]
    inside_lines = [line.strip() for line in seen.output.splitlines() if line.strip()]
    failures = []
    if (seen.exit_code, inside_lines) != (host.returncode, host_lines):
        failures.append(
            f"inside: exit {seen.exit_code} {inside_lines}; host: exit {host.returncode} "
            f"{host_lines}"
        )
    judge(
        hwcrypto_results,
        "lxc-openssl-afalg",
        failures,
        f"openssl engine -t afalg inside = host: {' / '.join(host_lines) or 'no output'}",
    )
