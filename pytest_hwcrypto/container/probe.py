# SPDX-License-Identifier: MIT
"""The checks run the same way on the host and inside a container, one JSON line out.

`python -m pytest_hwcrypto.container.probe WHAT ARGS...` -- the lxc suite runs it with
this interpreter on the host and, through the container's read-only binds, inside, and
compares the two answers. Each probe reports what it saw and never judges:

* `node PATH`: the node's kind, major:minor and mode, and what open(O_RDWR) gave;
* `mknod PATH KIND MAJOR MINOR`: make that node at PATH, then open it (cgroup refusals);
* `afalg NAME KEY IV DATA` / `cryptodev NAME KEY IV DATA` (hex): the driver the kernel
  gave a by-name session (refcnt evidence / CIOCGSESSINFO) and the ciphertext;
* `afalg-rate DRIVER BLOCK SECONDS` / `cryptodev-rate NAME BLOCK SECONDS`: bytes per second
  of back-to-back encryptions on one session, and the driver that served them.
"""

from __future__ import annotations

import errno
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from pytest_hwcrypto.container.nodes import read_node

RATE_KEY = bytes(range(32))
RATE_IV = bytes(16)


def _open_result(path: str) -> str:
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError as error:
        return errno.errorcode.get(error.errno or 0, str(error.errno))
    os.close(fd)
    return "ok"


def probe_node(path: str) -> dict[str, Any]:
    try:
        node = read_node(path)
    except ValueError as error:
        return {"path": path, "error": str(error)}
    return {
        "path": path,
        "kind": node.kind,
        "numbers": node.numbers,
        "mode": oct(node.mode),
        "open": _open_result(path),
    }


def probe_mknod(path: str, kind: str, major: str, minor: str) -> dict[str, Any]:
    import stat

    flag = stat.S_IFCHR if kind == "c" else stat.S_IFBLK
    try:
        os.mknod(path, 0o600 | flag, os.makedev(int(major), int(minor)))
    except OSError as error:
        return {"path": path, "mknod": errno.errorcode.get(error.errno or 0, "?")}
    try:
        return {"path": path, "mknod": "ok", "open": _open_result(path)}
    finally:
        os.unlink(path)


def probe_afalg(name: str, key: str, iv: str, data: str) -> dict[str, Any]:
    from pytest_hwcrypto.kernel import afalg

    with afalg.open_skcipher(name, bytes.fromhex(key)) as session:
        out = session.encrypt(bytes.fromhex(data), bytes.fromhex(iv))
        return {"driver": session.driver, "evidence": session.driver_evidence, "out": out.hex()}


def probe_cryptodev(name: str, key: str, iv: str, data: str) -> dict[str, Any]:
    from pytest_hwcrypto.kernel import cryptodev

    device = cryptodev.CryptoDevice()
    try:
        session = cryptodev.open_session(device, name, bytes.fromhex(key))
        with session:
            assert isinstance(session, cryptodev.CipherSession)
            out = session.encrypt(bytes.fromhex(data), bytes.fromhex(iv))
            return {"driver": session.driver, "out": out.hex()}
    finally:
        device.close()


def _rate(step: Callable[[int], object], block: int, seconds: float) -> float:
    step(4)  # warm-up: first-request costs stay out of the window
    count, done, started = 8, 0, time.perf_counter()
    while True:
        step(count)
        done += count
        elapsed = time.perf_counter() - started
        if elapsed >= seconds:
            return done * block / elapsed
        count = min(count * 2, 4096)


def probe_afalg_rate(driver: str, block: str, seconds: str) -> dict[str, Any]:
    from pytest_hwcrypto.kernel import afalg

    size = int(block)
    with afalg.open_skcipher(driver, RATE_KEY[:32]) as session:
        data = bytes(size)
        rate = _rate(
            lambda n: session.crypt_loop(data, RATE_IV, "encrypt", n), size, float(seconds)
        )
        return {"driver": session.driver, "bytes_per_second": rate}


def probe_cryptodev_rate(name: str, block: str, seconds: str) -> dict[str, Any]:
    from pytest_hwcrypto.kernel import cryptodev

    size = int(block)
    device = cryptodev.CryptoDevice()
    try:
        session = cryptodev.open_session(device, name, RATE_KEY[:32])
        with session:
            assert isinstance(session, cryptodev.CipherSession)
            request = session.request("encrypt", bytes(size), RATE_IV)
            rate = _rate(request.run, size, float(seconds))
            return {"driver": session.driver, "bytes_per_second": rate}
    finally:
        device.close()


def command(*args: str, interpreter: str | None = None) -> list[str]:
    """The argv of one probe run by this interpreter (on the host, or inside a container)."""
    return [interpreter or sys.executable, "-m", "pytest_hwcrypto.container.probe", *args]


def here(*args: str) -> dict[str, Any]:
    """Run a probe on the host, in its own process as inside, and return its answer."""
    import subprocess

    done = subprocess.run(command(*args), capture_output=True, text=True, check=False)
    return parse_answer(done.stdout + done.stderr)


def parse_answer(output: str) -> dict[str, Any]:
    """The probe's JSON line (the last line that parses), or an error naming what came."""
    for line in reversed(output.strip().splitlines()):
        try:
            answer = json.loads(line)
        except ValueError:
            continue
        if isinstance(answer, dict):
            return answer
    return {"error": f"no answer from the probe: {output.strip()[-300:]!r}"}


PROBES: dict[str, Callable[..., dict[str, Any]]] = {
    "node": probe_node,
    "mknod": probe_mknod,
    "afalg": probe_afalg,
    "cryptodev": probe_cryptodev,
    "afalg-rate": probe_afalg_rate,
    "cryptodev-rate": probe_cryptodev_rate,
}


def answer(args: Sequence[str]) -> dict[str, Any]:
    if not args or args[0] not in PROBES:
        return {"error": f"probe: one of {', '.join(PROBES)}"}
    try:
        return PROBES[args[0]](*args[1:])
    except Exception as error:  # reported, not raised: the caller compares both sides
        return {"error": f"{type(error).__name__}: {error}"}


def serve(requests: str, answers: str) -> int:
    """Answer probes one JSON line (a list of arguments) at a time until the requests end;
    `-` for stdin/stdout, else FIFOs (a container's, made from the host in its /tmp)."""
    source = sys.stdin if requests == "-" else open(requests, encoding="utf-8")  # noqa: SIM115
    sink = sys.stdout if answers == "-" else open(answers, "w", encoding="utf-8")  # noqa: SIM115
    for line in source:
        sink.write(json.dumps(answer([str(a) for a in json.loads(line)])) + "\n")
        sink.flush()
    return 0


def main(argv: Sequence[str]) -> int:
    if argv[:1] == ["serve"] and len(argv) == 3:
        return serve(argv[1], argv[2])
    if not argv or argv[0] not in PROBES:
        print(json.dumps({"error": f"probe: one of {', '.join(PROBES)}"}))
        return 2
    try:
        result = PROBES[argv[0]](*argv[1:])
    except Exception as error:  # reported, not raised: the caller compares both sides
        result = {"error": f"{type(error).__name__}: {error}"}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
