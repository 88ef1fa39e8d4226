# SPDX-License-Identifier: MIT
"""Can AF_ALG reach this kernel's asynchronous drivers? Asked of the kernel itself, once.

Kernels from v7.2 on (crypto commit 7524070f26d8, also backported by distributions) hand
AF_ALG only synchronous implementations: an offload engine's driver (virtio_crypto_aes_cbc,
a SoC's engine) stays listed in /proc/crypto and serves dm-crypt and tcrypt, but binding it
by its exact driver name gives ENOENT, and a bind by algorithm name silently gets software.
On such a kernel `cryptsetup benchmark`, OpenSSL's afalg engine and this plugin's AF_ALG
engine measure software whatever the winner is, so their figures must never be credited to
the engine.

The question is put to the kernel, not to its version (a backport carries no version
mark): every asynchronous driver AF_ALG could serve (skcipher, aead, hash types; tested;
not internal) is bound by its driver name, and each refused one's algorithm name is bound
as a control that AF_ALG itself works (by name, a masking kernel hands out software,
building a template instance such as cbc(aes-generic) if it has to). The kernel masks
off-CPU drivers when asynchronous drivers are refused as masked, none binds, and a refused
driver's name binds. A kernel where only some asynchronous drivers are refused is not
masking: those refusals have other reasons, which the engines explain per driver.

Linux 7.3 adds /proc/sys/crypto/af_alg_restrict (crypto/af_alg.c, default 1): AF_ALG then
binds only the algorithm names on each algif type's allowlist (cbc(aes), xts(aes), sha256...;
some only with CAP_NET_ADMIN or CAP_SYS_ADMIN) and refuses every other name, driver names
included, with ENOENT -- synchronous CPU drivers too (cbc-aes-aesni, cbc-aes-lib). So the
probe also binds a few synchronous drivers by driver name, and for each name that binds asks
which driver served (its /proc/crypto refcnt rose: kernel/afalg/resolve.py). `reach_line`
says in one header line what this kernel's AF_ALG reaches, on every kernel.

`judge` is pure (outcomes in, verdict out); `probe` binds through kernel/afalg.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.inventory import InventoryEntry, type_family
from pytest_hwcrypto.kernel.procfs import CryptoAlg
from pytest_hwcrypto.vocabulary import AlgType

# What binding one driver by its driver name gave.
BOUND = "bound"
REFUSED = "refused"  # ENOENT although listed: kept from AF_ALG (errors.AfAlgMasked)
NO_AFALG = "no-afalg"  # no AF_ALG (or no algif module) for this type
FAILED = "failed"  # another error (self-test, type): says nothing about the mask

# The AF_ALG types an asynchronous driver can be bound as.
_BINDABLE = (AlgType.SKCIPHER, AlgType.AEAD, AlgType.HASH)
_AEAD_TAG_BYTES = 16
_SHOWN = 6  # drivers named in a header line before "and N more"
_SYNC_PROBES = 3  # synchronous drivers bound by driver name to see a name restriction

Binder = Callable[[str, CryptoAlg], str]
# name -> the driver a bind of that algorithm name got (None: it did not bind)
Resolver = Callable[[str, CryptoAlg], "str | None"]


@dataclass(frozen=True)
class AfalgReach:
    """What AF_ALG reaches on this kernel, by driver name."""

    refused: tuple[str, ...] = ()  # asynchronous drivers kept from AF_ALG
    reached: tuple[str, ...] = ()  # asynchronous drivers AF_ALG bound
    controls: tuple[str, ...] = ()  # refused drivers' algorithm names that bound by name
    # The names whose asynchronous drivers were refused (cbc(aes), ...).
    names: tuple[str, ...] = ()
    why_unknown: str = ""  # set when AF_ALG could not be asked
    # /proc/sys/crypto/af_alg_restrict (Linux 7.3+), None when the kernel has none
    restrict: int | None = None
    sync_refused: tuple[str, ...] = ()  # synchronous drivers refused by driver name
    sync_reached: tuple[str, ...] = ()  # synchronous drivers bound by driver name
    # (algorithm name, the driver that served a bind of that name)
    served: tuple[tuple[str, str], ...] = ()
    # why the synchronous probes could not ask (no AF_ALG here, nothing bindable listed)
    sync_unknown: str = ""

    @property
    def refuses_driver_names(self) -> bool:
        """Driver names are refused as such (af_alg_restrict = 1): synchronous drivers too."""
        return bool(self.sync_refused) and not self.sync_reached

    def serving(self, name: str) -> str | None:
        """The driver a bind of algorithm `name` got, when the probe asked."""
        return next((driver for bound, driver in self.served if bound == name), None)

    @property
    def masks_off_cpu(self) -> bool:
        """Asynchronous drivers are refused as a class: the kernel hides off-CPU drivers."""
        return bool(self.refused) and not self.reached and bool(self.controls)

    def refuses(self, driver: str) -> bool:
        return self.masks_off_cpu and driver in self.refused

    def reach_line(self) -> str:
        """One header line: what this kernel's AF_ALG reaches, by driver and by name."""
        if self.restrict == 2:
            return (
                "hwcrypto: AF_ALG reaches nothing: /proc/sys/crypto/af_alg_restrict = 2 "
                "switches it off (Linux 7.3+)"
            )
        if self.why_unknown or self.sync_unknown:
            return f"hwcrypto: AF_ALG reach not known: {self.why_unknown or self.sync_unknown}"
        served = ", ".join(f"{name} -> {driver}" for name, driver in self.served[:_SHOWN])
        by_name = f"; by algorithm name {served}" if served else ""
        off_cpu = (
            f"; asynchronous (off-CPU) drivers never ({', '.join(self.refused[:_SHOWN])})"
            if self.masks_off_cpu
            else ""
        )
        if self.refuses_driver_names:
            refused = ", ".join(self.sync_refused)
            return (
                "hwcrypto: AF_ALG reaches no driver by its driver name "
                f"({refused}: ENOENT), only the algorithm names on its allowlist: "
                f"/proc/sys/crypto/af_alg_restrict = {self.restrict} (Linux 7.3+){by_name}"
                f"{off_cpu}; each driver is measured by name only where it serves that name"
            )
        restrict = (
            "no af_alg_restrict (before Linux 7.3)"
            if self.restrict is None
            else f"/proc/sys/crypto/af_alg_restrict = {self.restrict}"
        )
        if self.masks_off_cpu:
            return (
                f"hwcrypto: AF_ALG reaches synchronous drivers by driver name ({restrict}){off_cpu}"
            )
        return f"hwcrypto: AF_ALG reaches every listed driver by driver name ({restrict})"

    def header_line(self, first: Collection[str] = ()) -> str | None:
        """One line for the run's header when AF_ALG cannot reach off-CPU drivers; the
        drivers in `first` (the offload engines) are named before the others."""
        if not self.masks_off_cpu:
            return None
        return f"hwcrypto: {self.describe(first)}"

    def describe(self, first: Collection[str] = ()) -> str:
        ordered = sorted(self.refused, key=lambda driver: driver not in first)
        shown = ", ".join(ordered[:_SHOWN])
        more = f" and {len(ordered) - _SHOWN} more" if len(ordered) > _SHOWN else ""
        restricted = (
            "; /proc/sys/crypto/af_alg_restrict = 1 refuses synchronous drivers' names too, "
            "so AF_ALG is measured by algorithm name"
            if self.refuses_driver_names
            else ""
        )
        return (
            f"this kernel's AF_ALG refuses its asynchronous (off-CPU) drivers -- {shown}{more} "
            f"are listed in /proc/crypto but binding them by driver name gives ENOENT, while "
            f"{self.controls[0]} binds by name (to software) -- as kernels with crypto commit "
            f"{afalg.MASKING_COMMIT} do: AF_ALG, cryptsetup benchmark and OpenSSL's afalg "
            "engine measure software here; those drivers are measured through dm-crypt and "
            f"tcrypt only{restricted}"
        )


def bindable_async(entries: Sequence[CryptoAlg]) -> list[CryptoAlg]:
    """The asynchronous drivers AF_ALG would serve on a kernel without the mask."""
    return [alg for alg in entries if alg.is_async and _bindable(alg)]


def _bindable(alg: CryptoAlg) -> bool:
    return (
        type_family(alg.type) in _BINDABLE
        and not alg.is_internal
        and alg.passed_selftest
        and alg.complete
        and bool(alg.name)
    )


def judge(
    outcomes: Mapping[str, str], by_name: Mapping[str, str], entries: Sequence[CryptoAlg]
) -> AfalgReach:
    """The verdict from bind outcomes (pure).

    `outcomes` maps the asynchronous drivers of `entries` to what binding each by its driver
    name gave (BOUND, REFUSED, NO_AFALG, FAILED); `by_name` maps the algorithm names of the
    refused ones to what binding the name gave: the control, since a masking kernel still
    hands out a synchronous implementation by name (building the template instance if it
    has to), so AF_ALG itself works.
    """
    candidates = bindable_async(entries)
    if not candidates:
        return AfalgReach()
    if any(outcomes.get(alg.driver) == NO_AFALG for alg in candidates):
        return AfalgReach(why_unknown="AF_ALG is not available to ask")
    refused = [alg for alg in candidates if outcomes.get(alg.driver) == REFUSED]
    reached = [alg.driver for alg in candidates if outcomes.get(alg.driver) == BOUND]
    names = sorted({alg.name for alg in refused})
    return AfalgReach(
        refused=tuple(_unique(alg.driver for alg in refused)),
        reached=tuple(_unique(reached)),
        controls=tuple(name for name in names if by_name.get(name) == BOUND),
        names=tuple(names),
    )


def probe(
    entries: Sequence[CryptoAlg],
    binder: Binder | None = None,
    resolver: Resolver | None = None,
    policy: afalg.AfalgPolicy | None = None,
) -> AfalgReach:
    """Bind each asynchronous driver by its driver name, then each refused one's algorithm
    name as the control; judge the outcomes. Then bind a few synchronous drivers by driver
    name, and ask which driver served each name that binds."""
    bind = binder or bind_afalg
    outcomes: dict[str, str] = {}
    for alg in bindable_async(entries):
        if alg.driver not in outcomes:
            outcomes[alg.driver] = bind(alg.driver, alg)
        if outcomes[alg.driver] == NO_AFALG:
            break
    by_name: dict[str, str] = {}
    if NO_AFALG not in outcomes.values():
        for alg in bindable_async(entries):
            if outcomes[alg.driver] == REFUSED and alg.name not in by_name:
                by_name[alg.name] = bind(alg.name, alg)
    reach = judge(outcomes, by_name, entries)
    found = policy if policy is not None else afalg.read_policy()
    reach = replace(reach, restrict=found.restrict)
    if reach.why_unknown or found.restrict == 2:
        return reach
    sync = sync_probes(entries, reach.names)
    sync_outcomes = {alg.driver: bind(alg.driver, alg) for alg in sync}
    if not sync or NO_AFALG in sync_outcomes.values():
        why = "AF_ALG is not available to ask" if sync else "no driver it could bind is listed"
        return replace(reach, sync_unknown=why)
    resolve = resolver or serving_driver
    # The names users' tools bind: the refused drivers' names first, then the probes'.
    asked: dict[str, CryptoAlg] = {}
    for alg in [*bindable_async(entries), *sync]:
        if (alg.name in reach.controls or alg in sync) and alg.name not in asked:
            asked[alg.name] = alg
    served = []
    for name, alg in list(asked.items())[:_SHOWN]:
        driver = resolve(name, alg)
        if driver is not None:
            served.append((name, driver))
    return replace(
        reach,
        sync_refused=tuple(d for d, out in sync_outcomes.items() if out == REFUSED),
        sync_reached=tuple(d for d, out in sync_outcomes.items() if out == BOUND),
        served=tuple(served),
    )


def sync_probes(entries: Sequence[CryptoAlg], names: Sequence[str]) -> list[CryptoAlg]:
    """The best synchronous bindable driver of each of `names` (the names whose
    asynchronous drivers were refused) first, then of the other bindable names; a driver
    whose driver name is its algorithm name (a template instance) tells nothing."""
    candidates = [
        alg
        for alg in entries
        if alg.is_async is False and _bindable(alg) and alg.driver != alg.name
    ]
    wanted = list(dict.fromkeys([*names, *(alg.name for alg in candidates)]))
    chosen: list[CryptoAlg] = []
    for name in wanted:
        of_name = [alg for alg in candidates if alg.name == name]
        if of_name:
            chosen.append(max(of_name, key=lambda alg: alg.priority or 0))
        if len(chosen) == _SYNC_PROBES:
            break
    return chosen


def serving_driver(name: str, alg: CryptoAlg, timeout: float = 5.0) -> str | None:
    """The driver a bind of algorithm `name` (as `alg`'s type) gets, or None."""
    family = type_family(alg.type)
    key = bytes(alg.min_keysize or 16)
    try:
        if family == AlgType.HASH:
            session: afalg.AfAlgSession = afalg.open_hash(name, timeout=timeout)
        elif family == AlgType.SKCIPHER:
            session = afalg.open_skcipher(name, key, timeout=timeout)
        elif family == AlgType.AEAD:
            session = afalg.open_aead(name, key, authsize=_AEAD_TAG_BYTES, timeout=timeout)
        else:
            return None
    except (afalg.AfAlgError, OSError, ValueError):
        return None
    try:
        return session.driver
    finally:
        session.close()


def bind_afalg(what: str, alg: CryptoAlg, timeout: float = 5.0) -> str:
    """Bind `what` (a driver or algorithm name) as `alg`'s AF_ALG type and close it again."""
    family = type_family(alg.type)
    key = bytes(alg.min_keysize or 16) if family != AlgType.HASH else b""
    authsize = _AEAD_TAG_BYTES if family == AlgType.AEAD else None
    try:
        afalg.instantiate(what, family, key, authsize, timeout)
    except (afalg.BadKeyLength, afalg.BadAuthSize):
        return BOUND  # refused after the bind: the bind itself went through
    except afalg.AfAlgMasked:
        return REFUSED
    except afalg.AfAlgUnavailable:
        return NO_AFALG
    except (afalg.AfAlgError, OSError, ValueError):
        return FAILED
    return BOUND


def afalg_serves(
    name: str, inventory: Sequence[InventoryEntry], reach: AfalgReach
) -> InventoryEntry | None:
    """The driver a bind of algorithm `name` gets: the winner, or on a masking kernel the
    best synchronous driver of the name -- never an asynchronous one AF_ALG refuses."""
    of_name = [e for e in inventory if e.name == name]
    winner = next((e for e in of_name if e.winner), None)
    if winner is None or not reach.refuses(winner.driver):
        return winner
    served = [e for e in of_name if e.alg.is_async is False and _bindable(e.alg)]
    return max(served, key=lambda e: e.priority or 0, default=None)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
