# SPDX-License-Identifier: MIT
"""Tell what kind of implementation a /proc/crypto driver is, from its names alone.

``generic``   portable C in the crypto tree (``aes-generic``, ``sha256-generic``, templates
              built only on such drivers like ``xts(ecb(aes-generic))``) and software RNGs.
``cpu-accel`` CPU instructions or architecture-specific assembly (AES-NI, SHA-NI, ARMv8
              Crypto Extensions, NEON, s390 CPACF, VIA PadLock, MIPS/Octeon...).
``offload``   a device the CPU hands requests to (Allwinner CE, Marvell CESA, CAAM, QAT,
              CCP, virtio-crypto...).
``unknown``   anything nothing decides. Never guessed: calling hardware ``generic`` would
              make a hardware-beats-software rule compare hardware with hardware.

This module is the *name table* (the rules in ``class_rules*.py``) and the template logic.
What a live kernel or a capture says beyond names (crypto_user flags, bound devices, a
board profile's ``[[classify]]``) is weighed in ``classify_evidence.py``.

Lookup order, and why:

1. the module (unless ``kernel``, i.e. built in): a device or CPU-feature module registers
   only implementations of that kind, whatever its driver names look like
   (``hisi_sec_cbc(aes)`` or ``n5_cts(cbc(aes))`` contain parentheses but are a device);
2. driver-name patterns, rule by rule (offload rules come first so that
   ``cbc-aes-sun8i-ce`` is the Allwinner device and not an ARM ``*-ce`` driver); internal
   helpers are also tried without their ``__`` / ``__driver-`` prefix;
3. template instances (``xts(ecb(aes-generic))``, ``gcm_base(ctr(aes-aesni),ghash-clmulni)``):
   the class of the drivers inside. The template itself is generic C glue.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Callable

from pytest_hwcrypto.kernel.class_rules import GENERIC_RULES, UNKNOWN_RULES, ClassRule
from pytest_hwcrypto.kernel.class_rules_cpu import CPU_RULES
from pytest_hwcrypto.kernel.class_rules_offload import OFFLOAD_RULES
from pytest_hwcrypto.kernel.modprobe import normalize_module_name
from pytest_hwcrypto.vocabulary import DriverClass

DRIVER_CLASSES: tuple[DriverClass, ...] = tuple(DriverClass)

# /proc/crypto prints "kernel" as the module of built-in code: it says nothing about the kind.
BUILTIN_MODULE = "kernel"

# Order matters for driver patterns: first match wins. Offload first, then CPU, then generic.
DRIVER_CLASS_RULES: tuple[ClassRule, ...] = (
    *OFFLOAD_RULES,
    *CPU_RULES,
    *GENERIC_RULES,
    *UNKNOWN_RULES,
)

# Internal helpers carry their public twin's name behind a prefix: __xts-aes-aesni (5.x+),
# __driver-cbc-aes-aesni (3.x-4.x).
_INTERNAL_PREFIXES = ("__driver-", "__")

# Template arguments that are algorithm names, not drivers: pkcs1pad(rsa-generic,sha256)
# only uses the hash name to pick a DER prefix; no hash driver runs inside.
_NAME_ONLY_ARGUMENTS = {"pkcs1pad": (1,), "pkcs1": (1,)}

# How many template arguments the evidence line names before it says "...".
_NAMED_PARTS = 3


@dataclass(frozen=True)
class Classification:
    """A driver's class and the one line of evidence that decided it."""

    driver_class: str
    evidence: str


def classify_driver(driver: str, module: str) -> str:
    """Class of one /proc/crypto entry: ``generic``, ``cpu-accel``, ``offload`` or ``unknown``."""
    return classify_by_name(driver, module).driver_class


def classify_by_name(driver: str, module: str) -> Classification:
    """Class of one entry from the name table and templates, with the evidence line."""
    found = _rule_and_reason(driver, module)
    if found is not None:
        rule, reason = found
        if rule.driver_class == DriverClass.UNKNOWN:
            return Classification(rule.driver_class, f"unknown: {rule.what} ({reason})")
        return Classification(rule.driver_class, f"name table: {reason} ({rule.what})")
    template = classify_template(driver, lambda leaf: classify_by_name(leaf, ""))
    if template is not None:
        return template
    return Classification(DriverClass.UNKNOWN, unknown_reason(driver, module))


def unknown_reason(driver: str, module: str) -> str:
    """Why the name table cannot place ``driver``: the line an ``unknown`` entry carries."""
    where = (
        "built in (module : kernel)"
        if not module or normalize_module_name(module) == BUILTIN_MODULE
        else f"module {module} is not in the name table"
    )
    return f"unknown: no rule for driver name {driver!r}, {where}"


def matching_rule(driver: str, module: str = BUILTIN_MODULE) -> ClassRule | None:
    """The table rule that decides ``driver``/``module``, or None (template or unknown)."""
    found = _rule_and_reason(driver, module)
    return None if found is None else found[0]


def _rule_and_reason(driver: str, module: str) -> tuple[ClassRule, str] | None:
    if module and normalize_module_name(module) != BUILTIN_MODULE:
        for rule in DRIVER_CLASS_RULES:
            if rule.matches_module(module):
                return rule, f"module {normalize_module_name(module)}"
    for name in _name_variants(driver):
        for rule in DRIVER_CLASS_RULES:
            pattern = rule.pattern_for(name)
            if pattern is not None:
                return rule, f"driver {name} matches {pattern}"
    return None


def _name_variants(driver: str) -> list[str]:
    """The name itself, then without an internal helper's prefix (``__xts-aes-ce``)."""
    names = [driver]
    for prefix in _INTERNAL_PREFIXES:
        if driver.startswith(prefix) and len(driver) > len(prefix):
            names.append(driver[len(prefix) :])
            break
    return names


def is_known_module(module: str) -> bool:
    """Whether the rule table names ``module`` (a crypto driver module it knows)."""
    return any(rule.matches_module(module) for rule in DRIVER_CLASS_RULES)


def is_hardware(driver_class: str) -> bool:
    """True for classes that use hardware beyond plain C: CPU instructions or a device."""
    return driver_class in (DriverClass.CPU_ACCEL, DriverClass.OFFLOAD)


def is_offload(driver_class: str) -> bool:
    return driver_class == DriverClass.OFFLOAD


def inner_drivers(driver: str) -> list[str]:
    """Leaf drivers inside a template instance, left to right (``[]`` for a plain driver).

    ``gcm_base(ctr(aes-generic),ghash-generic)`` gives ``["aes-generic", "ghash-generic"]``.
    Arguments that are only algorithm names (the hash of ``pkcs1pad``) are left out.
    """
    parts = split_template(driver)
    if parts is None:
        return []
    template, arguments = parts
    skipped = _NAME_ONLY_ARGUMENTS.get(template, ())
    leaves: list[str] = []
    for index, argument in enumerate(arguments):
        if index in skipped:
            continue
        leaves.extend(inner_drivers(argument) or [argument])
    return leaves


def split_template(driver: str) -> tuple[str, list[str]] | None:
    """``"xts(ecb(aes-generic))"`` -> ``("xts", ["ecb(aes-generic)"])``; None if not a template.

    Only names of the form ``template(arg,...)`` with balanced parentheses qualify, so
    device names like ``cbc(aes)-ixp4xx`` are not taken apart.
    """
    opening = driver.find("(")
    if opening <= 0 or not driver.endswith(")"):
        return None
    arguments = split_top_level(driver[opening + 1 : -1])
    if arguments is None or not all(arguments):
        return None
    return driver[:opening], arguments


def split_top_level(inside: str) -> list[str] | None:
    """Split on top-level commas (``"hmac(sha256),cbc(aes)"`` -> two names, the comma inside
    ``authenc(hmac(sha256),cbc(aes))`` stays); None when the parentheses do not balance."""
    arguments: list[str] = []
    depth = 0
    start = 0
    for position, character in enumerate(inside):
        if character == "(":
            depth += 1
        elif character == ")":
            depth -= 1
            if depth < 0:
                return None
        elif character == "," and depth == 0:
            arguments.append(inside[start:position])
            start = position + 1
    if depth != 0:
        return None
    arguments.append(inside[start:])
    return arguments


def classify_template(
    driver: str, classify_leaf: Callable[[str], Classification]
) -> Classification | None:
    """A template instance's class from the drivers inside it; None if not a template.

    One kind inside: ``template: inner cbc-aes-ce (cpu-accel)``. Several kinds: the
    combined class (:func:`combine_classes`) with every part named, e.g. ``template:
    offload cbc-aes-caam + generic sha256-generic`` -- a generic hash around an offloaded
    cipher is said as such.
    """
    leaves = inner_drivers(driver)
    if not leaves:
        return None
    parts = [(leaf, classify_leaf(leaf)) for leaf in leaves]
    combined = combine_classes(part.driver_class for _, part in parts)
    kinds = {part.driver_class for _, part in parts}
    if len(kinds) == 1:
        named = ", ".join(leaf for leaf, _ in parts[:_NAMED_PARTS])
        more = ", ..." if len(parts) > _NAMED_PARTS else ""
        evidence = f"template: inner {named}{more} ({combined})"
        if combined == DriverClass.UNKNOWN:
            evidence = f"unknown: template over {named}{more}, which nothing decides"
        return Classification(combined, evidence)
    by_kind: list[str] = []
    for kind in (
        DriverClass.OFFLOAD,
        DriverClass.CPU_ACCEL,
        DriverClass.UNKNOWN,
        DriverClass.GENERIC,
    ):
        names = [leaf for leaf, part in parts if part.driver_class == kind]
        if names:
            by_kind.append(f"{kind} {', '.join(names)}")
    prefix = "template" if combined != DriverClass.UNKNOWN else "unknown: template"
    return Classification(combined, f"{prefix}: {' + '.join(by_kind)}")


def combine_classes(classes: Iterable[str]) -> str:
    """Class of a template instance from the classes of the drivers inside it.

    Any device inside makes it offload. Otherwise an unknown part makes it unknown (that
    part could be a device). Otherwise any CPU-accelerated part makes it cpu-accel, and
    only all-generic parts make it generic.
    """
    seen = set(classes)
    for decisive in (
        DriverClass.OFFLOAD,
        DriverClass.UNKNOWN,
        DriverClass.CPU_ACCEL,
        DriverClass.GENERIC,
    ):
        if decisive in seen:
            return decisive
    return DriverClass.UNKNOWN
