# SPDX-License-Identifier: MIT
"""AF_ALG engine logic without a kernel: error translation, driver identification, timeouts.

The errno values and /proc/crypto texts are injected; a fake socket stands in for AF_ALG
where the logic needs one (the real sockets are exercised in tests/board/test_afalg.py).
The last tests check this host, whose kernel has no AF_ALG.
"""

from __future__ import annotations

import errno
import socket
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.afalg import wire
from pytest_hwcrypto.kernel.afalg.probe import PROBE_NAMES
from pytest_hwcrypto.kernel.procfs import CryptoAlg, parse_proc_crypto

CAPTURES = Path(__file__).resolve().parent.parent / "data" / "proc_crypto"
QEMU = CAPTURES / "qemu-6.1.0-57-amd64.txt"


def block(
    name: str,
    driver: str,
    priority: int = 100,
    *,
    type_: str = "skcipher",
    refcnt: int = 1,
    internal: str = "no",
    selftest: str = "passed",
    extra: str = "",
) -> str:
    """One /proc/crypto record as the kernel prints it."""
    return (
        f"name         : {name}\n"
        f"driver       : {driver}\n"
        f"module       : kernel\n"
        f"priority     : {priority}\n"
        f"refcnt       : {refcnt}\n"
        f"selftest     : {selftest}\n"
        f"internal     : {internal}\n"
        f"type         : {type_}\n"
        f"{extra}\n"
    )


SKCIPHER_SIZES = (
    "async        : no\nblocksize    : 16\nmin keysize  : 16\nmax keysize  : 32\n"
    "ivsize       : 16\n"
)
ASYNC_SIZES = SKCIPHER_SIZES.replace("async        : no", "async        : yes")

PROC = "".join(
    [
        block("cbc(aes)", "cbc(aes-generic)", 100, extra=SKCIPHER_SIZES),
        block("cbc(aes)", "cbc(aes-fixed-time)", 101, extra=SKCIPHER_SIZES),
        block("cbc(aes)", "virtio_crypto_aes_cbc", 150, extra=ASYNC_SIZES),
        block("__cbc(aes)", "__cbc-aes-aesni", 400, internal="yes", extra=SKCIPHER_SIZES),
        block(
            "aes",
            "aes-generic",
            100,
            type_="cipher",
            extra="blocksize    : 16\nmin keysize  : 16\nmax keysize  : 32\n",
        ),
        block("ecb(aes)", "ecb-aes-broken", 300, selftest="unknown", extra=SKCIPHER_SIZES),
        block(
            "xts(aes)",
            "xts(ecb(aes-generic))",
            100,
            extra=SKCIPHER_SIZES.replace("16\nmax keysize  : 32", "32\nmax keysize  : 64"),
        ),
        block(
            "gcm(aes)",
            "gcm_base(ctr(aes-generic),ghash-generic)",
            100,
            type_="aead",
            extra="async        : no\nblocksize    : 1\nivsize       : 12\nmaxauthsize  : 16\n",
        ),
        block(
            "sha256",
            "sha256-generic",
            100,
            type_="shash",
            extra="blocksize    : 64\ndigestsize   : 32\n",
        ),
        block(
            "sha256",
            "sha256-offload",
            50,
            type_="ahash",
            extra="async        : yes\nblocksize    : 64\ndigestsize   : 32\n",
        ),
        block("stdrng", "ansi_cprng", 100, type_="rng", extra="seedsize     : 48\n"),
    ]
)

AVAILABLE = (True, "AF_ALG skcipher is available")
MISSING = (False, afalg.unavailable_message("skcipher", "none of ecb(aes) could be bound"))


def registered(text: str = PROC) -> list[CryptoAlg]:
    return parse_proc_crypto(text, "fake")


def by_driver(driver: str, text: str = PROC) -> CryptoAlg:
    return next(alg for alg in registered(text) if alg.driver == driver)


# --- bind errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("alg_type", "option", "module"),
    [
        ("skcipher", "CONFIG_CRYPTO_USER_API_SKCIPHER", "algif_skcipher"),
        ("hash", "CONFIG_CRYPTO_USER_API_HASH", "algif_hash"),
        ("aead", "CONFIG_CRYPTO_USER_API_AEAD", "algif_aead"),
        ("rng", "CONFIG_CRYPTO_USER_API_RNG", "algif_rng"),
    ],
)
def test_enoent_for_every_name_means_algif_is_missing(
    alg_type: str, option: str, module: str
) -> None:
    missing = (False, afalg.unavailable_message(alg_type, "probes failed"))
    error = afalg.explain_bind_error("cbc(aes)", alg_type, errno.ENOENT, registered(), missing)
    assert isinstance(error, afalg.AfAlgUnavailable)
    assert error.config_option == option
    assert option in str(error)
    assert f"modprobe {module}" in str(error)


def test_no_af_alg_family_is_unavailable() -> None:
    error = afalg.explain_bind_error("cbc(aes)", "skcipher", errno.EAFNOSUPPORT, [], MISSING)
    assert isinstance(error, afalg.AfAlgUnavailable)
    assert "CONFIG_CRYPTO_USER_API_SKCIPHER" in str(error)


def test_unknown_name_is_not_registered() -> None:
    error = afalg.explain_bind_error(
        "cbc(aes-nope)", "skcipher", errno.ENOENT, registered(), AVAILABLE
    )
    assert isinstance(error, afalg.DriverNotRegistered)
    assert str(error).startswith("driver cbc(aes-nope) is not registered")
    assert "\n" not in str(error)


def test_name_that_does_not_round_trip_is_not_registered() -> None:
    """gcm(aes-generic) instantiates gcm_base(ctr(aes-generic),ghash-generic): no match."""
    error = afalg.explain_bind_error(
        "gcm(aes-generic)", "aead", errno.ENOENT, registered(), AVAILABLE
    )
    assert isinstance(error, afalg.DriverNotRegistered)


def test_bare_cipher_is_a_type_mismatch() -> None:
    error = afalg.explain_bind_error("aes", "skcipher", errno.ENOENT, registered(), AVAILABLE)
    assert isinstance(error, afalg.AlgTypeMismatch)
    assert "registered as type cipher" in str(error)
    assert "cbc(aes)" in str(error)


def test_registered_async_driver_refused_is_masked() -> None:
    error = afalg.explain_bind_error(
        "virtio_crypto_aes_cbc", "skcipher", errno.ENOENT, registered(), AVAILABLE
    )
    assert isinstance(error, afalg.AfAlgMasked)
    assert error.alg == "virtio_crypto_aes_cbc"
    assert error.driver == "virtio_crypto_aes_cbc"
    assert error.finding_kind == "afalg-masked"
    message = str(error)
    assert "7524070f26d8" in message
    assert "Drop support for off-CPU cryptography" in message
    assert "dm-crypt or tcrypt" in message


def test_masked_by_name_points_at_the_async_driver() -> None:
    text = block("cbc(aes)", "virtio_crypto_aes_cbc", 150, extra=ASYNC_SIZES)
    error = afalg.explain_bind_error(
        "cbc(aes)", "skcipher", errno.ENOENT, registered(text), AVAILABLE
    )
    assert isinstance(error, afalg.AfAlgMasked)
    assert error.driver == "virtio_crypto_aes_cbc"


def test_synchronous_driver_refused_is_not_blamed_on_the_off_cpu_mask() -> None:
    error = afalg.explain_bind_error(
        "cbc(aes-generic)", "skcipher", errno.ENOENT, registered(), AVAILABLE
    )
    assert isinstance(error, afalg.AfAlgMasked)
    assert "7524070f26d8" not in str(error)
    # No FIPS guess: fips_enabled is absent here.
    assert "not FIPS mode (fips_enabled absent)" in str(error)


def test_fips_is_named_only_when_fips_enabled_is_1() -> None:
    error = afalg.explain_bind_error(
        "cbc(aes-generic)", "skcipher", errno.ENOENT, registered(), AVAILABLE,
        afalg.AfalgPolicy(fips=True),
    )  # fmt: skip
    assert "FIPS mode is on (/proc/sys/crypto/fips_enabled = 1)" in str(error)


LINUX_73 = block("cbc(aes)", "cbc-aes-aesni", 400, extra=SKCIPHER_SIZES) + block(
    "cbc(aes)", "virtio_crypto_aes_cbc", 150, extra=ASYNC_SIZES
)


def test_af_alg_restrict_1_refuses_a_synchronous_driver_name_and_says_bind_the_name() -> None:
    error = afalg.explain_bind_error(
        "cbc-aes-aesni", "skcipher", errno.ENOENT, registered(LINUX_73), AVAILABLE,
        afalg.AfalgPolicy(restrict=1, fips=None),
    )  # fmt: skip
    assert isinstance(error, afalg.AfAlgRestricted)
    assert isinstance(error, afalg.AfAlgMasked)  # the engines' finding, not a failure
    text = str(error)
    assert "af_alg_restrict = 1" in text and "never a driver name" in text
    assert "bind cbc(aes)" in text
    assert "FIPS" not in text and "7524070f26d8" not in text


def test_af_alg_restrict_1_and_an_async_driver_names_both_reasons() -> None:
    error = afalg.explain_bind_error(
        "virtio_crypto_aes_cbc", "skcipher", errno.ENOENT, registered(LINUX_73), AVAILABLE,
        afalg.AfalgPolicy(restrict=1),
    )  # fmt: skip
    assert isinstance(error, afalg.AfAlgRestricted)
    assert "af_alg_restrict = 1" in str(error) and "7524070f26d8" in str(error)
    assert error.driver == "virtio_crypto_aes_cbc"


def test_af_alg_restrict_2_is_af_alg_switched_off() -> None:
    error = afalg.explain_bind_error(
        "cbc(aes)", "skcipher", errno.EAFNOSUPPORT, [], AVAILABLE, afalg.AfalgPolicy(restrict=2)
    )
    assert isinstance(error, afalg.AfAlgUnavailable)
    assert "af_alg_restrict = 2" in str(error)


def test_read_policy_from_a_tree(tmp_path: Path) -> None:
    assert afalg.read_policy(tmp_path) == afalg.AfalgPolicy(None, None)
    (tmp_path / "proc/sys/crypto").mkdir(parents=True)
    (tmp_path / "proc/sys/crypto/af_alg_restrict").write_text("1\n")
    (tmp_path / "proc/sys/crypto/fips_enabled").write_text("0\n")
    assert afalg.read_policy(tmp_path) == afalg.AfalgPolicy(restrict=1, fips=False)


def test_internal_helper_is_masked_with_its_own_reason() -> None:
    error = afalg.explain_bind_error(
        "__cbc-aes-aesni", "skcipher", errno.ENOENT, registered(), AVAILABLE
    )
    assert isinstance(error, afalg.AfAlgMasked)
    assert "internal helper" in str(error)


def test_elibbad_names_the_driver_that_failed_its_selftest() -> None:
    error = afalg.explain_bind_error("ecb(aes)", "skcipher", errno.ELIBBAD, registered(), AVAILABLE)
    assert isinstance(error, afalg.SelfTestFailed)
    assert error.driver == "ecb-aes-broken"
    assert "self-test" in str(error)


def test_other_errno_on_a_registered_driver_is_reported_with_its_name() -> None:
    error = afalg.explain_bind_error("cbc(aes)", "skcipher", errno.EINVAL, registered(), AVAILABLE)
    assert isinstance(error, afalg.BindRefused)
    assert error.errno == errno.EINVAL
    assert "EINVAL" in str(error)


# --- which driver was bound --------------------------------------------------------------------


def test_exact_driver_name_binds_that_driver() -> None:
    algs = registered()
    assert afalg.resolve_driver("cbc(aes-generic)", "skcipher", algs, algs) == (
        "cbc(aes-generic)",
        "exact",
    )


def test_by_name_the_highest_priority_non_internal_driver_wins() -> None:
    algs = registered()
    # The internal __cbc-aes-aesni (400) is another name; virtio (150) beats fixed-time (101).
    assert afalg.resolve_driver("cbc(aes)", "skcipher", algs, algs) == (
        "virtio_crypto_aes_cbc",
        "priority",
    )


def test_untested_driver_does_not_win_by_priority() -> None:
    text = block("ecb(aes)", "ecb(aes-generic)", 100, extra=SKCIPHER_SIZES) + PROC
    algs = registered(text)
    assert afalg.resolve_driver("ecb(aes)", "skcipher", algs, algs)[0] == "ecb(aes-generic)"


def test_priority_tie_goes_to_the_first_listed() -> None:
    text = block("cbc(aes)", "cbc-new", 200, extra=SKCIPHER_SIZES) + block(
        "cbc(aes)", "cbc-old", 200, extra=SKCIPHER_SIZES
    )
    algs = registered(text)
    assert afalg.resolve_driver("cbc(aes)", "skcipher", algs, algs)[0] == "cbc-new"


def test_refcnt_rise_is_evidence_over_the_priority_rule() -> None:
    """A kernel masking async drivers binds fixed-time although virtio has more priority."""
    before = registered()
    after = registered(
        PROC.replace(
            "driver       : cbc(aes-fixed-time)\nmodule       : kernel\npriority     : 101\n"
            "refcnt       : 1",
            "driver       : cbc(aes-fixed-time)\nmodule       : kernel\npriority     : 101\n"
            "refcnt       : 2",
        )
    )
    assert afalg.resolve_driver("cbc(aes)", "skcipher", before, after) == (
        "cbc(aes-fixed-time)",
        "refcnt",
    )


def test_instance_created_by_the_bind_counts_as_bound() -> None:
    """A new template instance appears with refcnt 2: its own reference plus the session's."""
    after = registered(block("ctr(aes)", "ctr(aes-generic)", 100, refcnt=2, extra=SKCIPHER_SIZES))
    assert afalg.resolve_driver("ctr(aes)", "skcipher", [], after) == ("ctr(aes-generic)", "refcnt")
    unused = registered(block("ctr(aes)", "ctr(aes-generic)", 100, refcnt=1, extra=SKCIPHER_SIZES))
    assert afalg.resolve_driver("ctr(aes)", "skcipher", [], unused) == (
        "ctr(aes-generic)",
        "priority",
    )


def test_qemu_capture_cbc_aes_resolves_to_aesni() -> None:
    algs = parse_proc_crypto(QEMU.read_text(), str(QEMU))
    assert afalg.resolve_driver("cbc(aes)", "skcipher", algs, algs) == ("cbc-aes-aesni", "priority")
    assert afalg.resolve_driver("sha256", "hash", algs, algs)[0] == "sha256-avx2"


# --- key, seed and operation errors ------------------------------------------------------------


def test_key_length_outside_the_range_names_length_and_range() -> None:
    error = afalg.explain_key_error(
        "cbc(aes)", "skcipher", "cbc(aes-generic)", 15, errno.EINVAL, by_driver("cbc(aes-generic)")
    )
    assert isinstance(error, afalg.BadKeyLength)
    assert error.key_length == 15
    assert str(error) == (
        "cbc(aes) (driver cbc(aes-generic)): key of 15 bytes rejected: keysize must be 16..32 bytes"
    )


def test_key_length_inside_the_range_explains_the_gaps() -> None:
    entry = by_driver("xts(ecb(aes-generic))")
    error = afalg.explain_key_error("xts(aes)", "skcipher", entry.driver, 40, errno.EINVAL, entry)
    assert isinstance(error, afalg.BadKeyLength)
    assert "although keysize is 32..64 bytes" in str(error)


def test_key_error_without_proc_crypto_still_names_the_length() -> None:
    error = afalg.explain_key_error("cbc(aes)", "skcipher", None, 7, errno.EINVAL, None)
    assert isinstance(error, afalg.BadKeyLength)
    assert "key of 7 bytes" in str(error)
    assert "range unknown" in str(error)


def test_rng_seed_error_names_the_seedsize() -> None:
    error = afalg.explain_key_error(
        "ansi_cprng", "rng", "ansi_cprng", 0, errno.EINVAL, by_driver("ansi_cprng")
    )
    assert isinstance(error, afalg.BadKeyLength)
    assert "needs a seed of 48 bytes" in str(error)


def test_aead_ebadmsg_is_an_authentication_failure() -> None:
    error = afalg.explain_op_error(
        "gcm(aes)",
        "aead",
        "gcm_base(ctr(aes-generic),ghash-generic)",
        "decrypt",
        errno.EBADMSG,
        None,
    )
    assert isinstance(error, afalg.AuthenticationFailed)
    assert "EBADMSG" in str(error)


def test_partial_block_names_the_block_size() -> None:
    error = afalg.explain_op_error(
        "cbc(aes)",
        "skcipher",
        "cbc(aes-generic)",
        "encrypt",
        errno.EINVAL,
        by_driver("cbc(aes-generic)"),
        15,
        16,
    )
    assert isinstance(error, afalg.OperationFailed)
    assert error.op == "encrypt"
    assert error.errno == errno.EINVAL
    assert str(error) == (
        "cbc(aes) (driver cbc(aes-generic)): encrypt failed with EINVAL: "
        "15 bytes is not a multiple of the 16-byte block size"
    )


def test_wrong_iv_length_is_named() -> None:
    error = afalg.explain_op_error(
        "cbc(aes)",
        "skcipher",
        "cbc(aes-generic)",
        "decrypt",
        errno.EINVAL,
        by_driver("cbc(aes-generic)"),
        32,
        8,
    )
    assert "the IV must be 16 bytes, got 8" in str(error)


def test_missing_key_says_so() -> None:
    error = afalg.explain_op_error(
        "hmac(sha256)", "hash", "hmac(sha256-generic)", "digest", errno.ENOKEY, None
    )
    assert "needs a key" in str(error)


def test_large_request_enomem_points_at_optmem_max() -> None:
    error = afalg.explain_op_error(
        "xts(aes)", "skcipher", None, "encrypt", errno.ENOMEM, None, 2 << 20
    )
    assert "net.core.optmem_max" in str(error)


# --- fake sockets: the session logic around the kernel -----------------------------------------


class FakeAlgSocket:
    """Just enough of an AF_ALG socket; each behaviour is an errno or a callable."""

    def __init__(self, behaviour: dict[str, Any]) -> None:
        self.behaviour = behaviour
        self.closed = False

    def _act(self, what: str, *args: Any) -> Any:
        action = self.behaviour.get(what)
        if isinstance(action, int):
            raise OSError(action, errno.errorcode[action])
        return action(*args) if callable(action) else None

    def bind(self, address: tuple[str, str]) -> None:
        self._act("bind", address)

    def setsockopt(self, *args: Any) -> None:
        self._act("setsockopt", *args)

    def getsockopt(self, *args: Any) -> int:
        return 1 << 30

    def accept(self) -> tuple[FakeAlgSocket, None]:
        return FakeAlgSocket(self.behaviour), None

    def setblocking(self, flag: bool) -> None:
        pass

    def sendmsg(self, msg: list[bytes], *args: Any) -> int:
        taken = self._act("sendmsg", msg[0])
        return len(msg[0]) if taken is None else int(taken)

    def send(self, data: bytes) -> int:
        return len(data)

    def recv_into(self, buffer: memoryview) -> int:
        result = self._act("recv_into", buffer)
        return len(buffer) if result is None else int(result)

    def close(self) -> None:
        self.closed = True

    def __enter__(self) -> FakeAlgSocket:
        return self

    def __exit__(self, *args: object) -> None:
        self.close()


@pytest.fixture
def fake_proc(tmp_path: Path) -> Path:
    path = tmp_path / "crypto"
    path.write_text(PROC)
    return path


@pytest.fixture
def modprobe_calls() -> list[str]:
    return []


@pytest.fixture
def probe(modprobe_calls: list[str]) -> afalg.Probe:
    """A fresh availability cache whose modprobe only records the module it was asked for."""
    return afalg.Probe(modprobe=modprobe_calls.append)


def use_fake(monkeypatch: pytest.MonkeyPatch, behaviour: dict[str, Any]) -> list[FakeAlgSocket]:
    made: list[FakeAlgSocket] = []

    def factory() -> FakeAlgSocket:
        made.append(FakeAlgSocket(behaviour))
        return made[-1]

    monkeypatch.setattr(wire, "new_alg_socket", factory)
    return made


def only_probes_bind(address: tuple[str, str]) -> None:
    if address[1] not in PROBE_NAMES[address[0]]:
        raise OSError(errno.ENOENT, "ENOENT")


def test_every_bind_failing_is_unavailable_after_one_modprobe(
    monkeypatch: pytest.MonkeyPatch,
    fake_proc: Path,
    probe: afalg.Probe,
    modprobe_calls: list[str],
) -> None:
    use_fake(monkeypatch, {"bind": errno.ENOENT})
    for _ in range(2):
        with pytest.raises(afalg.AfAlgUnavailable, match="CONFIG_CRYPTO_USER_API_SKCIPHER"):
            afalg.open_skcipher("cbc(aes)", bytes(16), proc_crypto_path=fake_proc, probe=probe)
    assert modprobe_calls == ["algif_skcipher"]
    assert probe.modprobe_tried == {"skcipher"}
    available, why = afalg.afalg_available("skcipher", proc_crypto_path=fake_proc, probe=probe)
    assert not available
    # /proc/crypto lists a probe name: so the algif module is what is missing.
    assert "though /proc/crypto lists ecb(aes)" in why


def test_unknown_driver_with_working_af_alg(
    monkeypatch: pytest.MonkeyPatch,
    fake_proc: Path,
    probe: afalg.Probe,
    modprobe_calls: list[str],
) -> None:
    made = use_fake(monkeypatch, {"bind": only_probes_bind})
    with pytest.raises(afalg.DriverNotRegistered, match="driver no-such is not registered"):
        afalg.open_skcipher("no-such", bytes(16), proc_crypto_path=fake_proc, probe=probe)
    assert modprobe_calls == []
    assert probe.known_available == {"skcipher"}
    assert all(sock.closed for sock in made)


def test_bad_key_closes_the_socket_and_names_the_range(
    monkeypatch: pytest.MonkeyPatch, fake_proc: Path, probe: afalg.Probe
) -> None:
    made = use_fake(monkeypatch, {"setsockopt": errno.EINVAL})
    with pytest.raises(afalg.BadKeyLength, match=r"keysize must be 16\.\.32 bytes"):
        afalg.open_skcipher("cbc(aes-generic)", bytes(15), proc_crypto_path=fake_proc, probe=probe)
    assert made[-1].closed


def test_session_reports_driver_and_closes_everything(
    monkeypatch: pytest.MonkeyPatch, fake_proc: Path
) -> None:
    made = use_fake(monkeypatch, {})
    with afalg.open_skcipher("cbc(aes)", bytes(16), proc_crypto_path=fake_proc) as session:
        assert session.driver == "virtio_crypto_aes_cbc"
        assert session.driver_evidence == "priority"
        assert session.registration is not None and session.registration.ivsize == 16
        assert len(session.encrypt(bytes(32), bytes(16), chunks=[5, 11])) == 32
        session.crypt_loop(bytes(64), bytes(16), "encrypt", 10)
    assert session.closed
    assert made[0].closed


def test_chunks_longer_than_the_data_are_refused(
    monkeypatch: pytest.MonkeyPatch, fake_proc: Path
) -> None:
    use_fake(monkeypatch, {})
    with (
        afalg.open_skcipher("cbc(aes)", bytes(16), proc_crypto_path=fake_proc) as session,
        pytest.raises(ValueError, match="sum to at most 16 bytes"),
    ):
        session.encrypt(bytes(16), bytes(16), chunks=[8, 16])


def test_short_reads_are_completed(monkeypatch: pytest.MonkeyPatch, fake_proc: Path) -> None:
    """The kernel may hand back less than asked per read: the engine keeps reading."""
    reads: list[int] = []

    def seven_at_a_time(buffer: memoryview) -> int:
        count = min(7, len(buffer))
        buffer[:count] = bytes([len(reads)]) * count
        reads.append(count)
        return count

    use_fake(monkeypatch, {"recv_into": seven_at_a_time})
    with afalg.open_skcipher("cbc(aes)", bytes(16), proc_crypto_path=fake_proc) as session:
        out = session.encrypt(bytes(32), bytes(16))
    assert reads == [7, 7, 7, 7, 4]
    assert out == bytes([0] * 7 + [1] * 7 + [2] * 7 + [3] * 7 + [4] * 4)


def test_send_cut_short_by_the_kernel_names_the_size(
    monkeypatch: pytest.MonkeyPatch, fake_proc: Path
) -> None:
    """af_alg returns a partial count when its buffers or option memory run out."""
    use_fake(monkeypatch, {"sendmsg": lambda data: len(data) // 2})
    with (
        afalg.open_skcipher("cbc(aes)", bytes(16), proc_crypto_path=fake_proc) as session,
        pytest.raises(
            afalg.OperationFailed,
            match="EMSGSIZE: 1048576 bytes do not fit AF_ALG's socket buffers",
        ),
    ):
        session.encrypt(bytes(1 << 20), bytes(16))


def test_aead_bad_tag_returns_no_plaintext(
    monkeypatch: pytest.MonkeyPatch, fake_proc: Path
) -> None:
    use_fake(monkeypatch, {"recv_into": errno.EBADMSG})
    with (
        afalg.open_aead("gcm(aes)", bytes(16), authsize=16, proc_crypto_path=fake_proc) as session,
        pytest.raises(afalg.AuthenticationFailed),
    ):
        session.decrypt(bytes(48), bytes(12), b"aad")


def test_hung_driver_raises_operation_timeout(
    monkeypatch: pytest.MonkeyPatch, fake_proc: Path
) -> None:
    release = threading.Event()

    def hang(buffer: memoryview) -> int:
        release.wait(10)  # stands in for an uninterruptible crypto_wait_req
        return len(buffer)

    use_fake(monkeypatch, {"recv_into": hang})
    try:
        with afalg.open_skcipher(
            "cbc(aes)", bytes(16), timeout=0.2, proc_crypto_path=fake_proc
        ) as session:
            with pytest.raises(afalg.OperationTimeout) as caught:
                session.encrypt(bytes(16), bytes(16))
            assert caught.value.op == "encrypt"
            assert caught.value.timeout == 0.2
            assert (
                "cbc(aes) (driver virtio_crypto_aes_cbc): encrypt did not complete within "
                "0.2 s; the driver may be hung" in str(caught.value)
            )
            # The stuck worker may still own the transform: the session refuses further use.
            with pytest.raises(afalg.OperationFailed, match="unusable since its encrypt"):
                session.encrypt(bytes(16), bytes(16))
    finally:
        release.set()


def test_timing_loop_may_outlast_the_timeout_while_it_progresses(
    monkeypatch: pytest.MonkeyPatch, fake_proc: Path
) -> None:
    import time

    def slow(buffer: memoryview) -> int:
        time.sleep(0.01)
        return len(buffer)

    use_fake(monkeypatch, {"recv_into": slow})
    with afalg.open_hash("sha256-offload", proc_crypto_path=fake_proc, timeout=0.1) as session:
        assert session._may_sleep_in_driver
        session.digest_loop(bytes(64), 60)  # ~0.6 s in all, far beyond 0.1 s + grace
        assert session.digest_size == 32


@pytest.mark.parametrize(
    ("open_session", "isolated"),
    [
        (
            lambda path: afalg.open_skcipher("cbc(aes-generic)", bytes(16), proc_crypto_path=path),
            False,
        ),
        (
            lambda path: afalg.open_skcipher(
                "virtio_crypto_aes_cbc", bytes(16), proc_crypto_path=path
            ),
            True,
        ),
        (lambda path: afalg.open_hash("sha256-generic", proc_crypto_path=path), False),
        (lambda path: afalg.open_hash("sha256-offload", proc_crypto_path=path), True),
        (lambda path: afalg.open_rng("ansi_cprng", bytes(48), proc_crypto_path=path), False),
        (lambda path: afalg.open_hash("unlisted", proc_crypto_path=path), True),
    ],
)
def test_only_drivers_that_may_sleep_run_in_a_watched_thread(
    monkeypatch: pytest.MonkeyPatch,
    fake_proc: Path,
    open_session: Callable[[Path], afalg.AfAlgSession],
    isolated: bool,
) -> None:
    """Synchronous drivers compute inside the syscall: a thread per call would only cost."""
    use_fake(monkeypatch, {})
    with open_session(fake_proc) as session:
        assert session._may_sleep_in_driver is isolated


def test_instantiate_binds_and_closes(monkeypatch: pytest.MonkeyPatch) -> None:
    binds: list[tuple[str, str]] = []
    made = use_fake(monkeypatch, {"bind": binds.append})
    afalg.instantiate("cbc(aes-generic)", afalg.SKCIPHER, bytes(16))
    afalg.instantiate("sha256-generic", afalg.HASH)
    afalg.instantiate("gcm(aes-generic)", afalg.AEAD, bytes(16), authsize=16)
    assert binds == [
        ("skcipher", "cbc(aes-generic)"),
        ("hash", "sha256-generic"),
        ("aead", "gcm(aes-generic)"),
    ]
    assert made and all(sock.closed for sock in made)


def test_instantiate_raises_what_opening_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    use_fake(monkeypatch, {"setsockopt": errno.EINVAL})
    with pytest.raises(afalg.BadKeyLength):
        afalg.instantiate("cbc(aes-generic)", afalg.SKCIPHER, bytes(15))
    with pytest.raises(ValueError, match="needs authsize"):
        afalg.instantiate("gcm(aes)", afalg.AEAD, bytes(16))
    with pytest.raises(ValueError, match="unknown AF_ALG type"):
        afalg.instantiate("aes", "cipher")


def test_unknown_type_and_op_are_value_errors(
    monkeypatch: pytest.MonkeyPatch, fake_proc: Path
) -> None:
    with pytest.raises(ValueError, match="unknown AF_ALG type"):
        afalg.afalg_available("cipher")
    use_fake(monkeypatch, {})
    with (
        afalg.open_skcipher("cbc(aes)", bytes(16), proc_crypto_path=fake_proc) as session,
        pytest.raises(ValueError, match="op must be"),
    ):
        session.crypt_loop(bytes(16), bytes(16), "sign", 1)


# --- this host ---------------------------------------------------------------------------------


def _host_has_af_alg() -> bool:
    try:
        socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET, 0).close()
    except (OSError, AttributeError):
        return False
    return True


@pytest.mark.skipif(_host_has_af_alg(), reason="this kernel has AF_ALG")
@pytest.mark.parametrize("alg_type", afalg.ALG_TYPES)
def test_host_without_af_alg_is_reported_unavailable(alg_type: str) -> None:
    available, why = afalg.afalg_available(alg_type)
    assert not available
    assert f"CONFIG_CRYPTO_USER_API_{alg_type.upper()}" in why
    assert f"modprobe algif_{alg_type}" in why
    assert "\n" not in why


@pytest.mark.skipif(_host_has_af_alg(), reason="this kernel has AF_ALG")
def test_host_without_af_alg_refuses_to_open() -> None:
    with pytest.raises(afalg.AfAlgUnavailable, match="CONFIG_CRYPTO_USER_API_HASH"):
        afalg.open_hash("sha256")
