# SPDX-License-Identifier: MIT
"""A board over SSH, through the OpenSSH client (dropbear on the board is enough).

One ControlMaster connection per run: each command after the first reuses it, so a command
costs a round trip, not a key exchange. BatchMode: a key that is refused is an error at
once, never a password prompt that waits. The board's host key is accepted the first time
and kept in this run's own known_hosts (boards that boot from a ramdisk make a new key at
every boot; the user's ~/.ssh/known_hosts is not touched).

Files go through `cat` on the board: a busybox board has no sftp-server and dropbear's
package no scp, while every POSIX shell has cat and redirection.
"""

from __future__ import annotations

import shlex
import subprocess
import tempfile
from pathlib import Path

from pytest_hwcrypto.target.protocol import DEFAULT_COMMAND_SECONDS, CommandResult, TargetError
from pytest_hwcrypto.target.spec import SshTarget

CONNECT_SECONDS = 20
SSH_FAILED = 255  # ssh's own status when the connection, not the command, failed


class SshTransport:
    def __init__(self, target: SshTarget, identity: str | None = None) -> None:
        self.target = target
        self.identity = identity
        self._dir = tempfile.TemporaryDirectory(prefix="hwcrypto-ssh-")
        self._control = Path(self._dir.name) / "control"
        self._opened = False

    def describe(self) -> str:
        return self.target.describe()

    def _argv(self, *extra: str) -> list[str]:
        argv = [
            "ssh",
            "-p",
            str(self.target.port),
            "-o",
            "BatchMode=yes",
            "-o",
            f"ConnectTimeout={CONNECT_SECONDS}",
            "-o",
            "StrictHostKeyChecking=accept-new",
            "-o",
            f"UserKnownHostsFile={Path(self._dir.name) / 'known_hosts'}",
            "-o",
            "ControlMaster=auto",
            "-o",
            f"ControlPath={self._control}",
            "-o",
            "ControlPersist=600",
            "-o",
            "LogLevel=ERROR",
        ]
        if self.identity:
            argv += ["-i", self.identity, "-o", "IdentitiesOnly=yes"]
        return [*argv, *extra, f"{self.target.user}@{self.target.host}"]

    def _ssh(
        self, command: str, timeout: float, stdin: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        argv = [*self._argv(), command]
        try:
            done = subprocess.run(
                argv,
                input=stdin if stdin is not None else b"",
                capture_output=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as expired:
            raise TargetError(
                f"{self.describe()}: `{command}` took more than {timeout:.0f} s"
            ) from expired
        except FileNotFoundError as missing:
            raise TargetError(
                "an SSH target needs OpenSSH's ssh: apt-get install openssh-client"
            ) from missing
        if done.returncode == SSH_FAILED:
            said = done.stderr.decode(errors="replace").strip().splitlines()
            raise TargetError(f"{self.describe()}: {said[-1] if said else 'ssh failed'}")
        self._opened = True
        return done

    def run(self, command: str, timeout: float = DEFAULT_COMMAND_SECONDS) -> CommandResult:
        # The board's login shell gets one string; stderr joins stdout there, as on a console.
        done = self._ssh(f"exec 2>&1; {command}", timeout)
        return CommandResult(done.returncode, done.stdout.decode(errors="replace"))

    def put(self, local: Path, remote: str) -> None:
        data = local.read_bytes()
        partial = shlex.quote(remote + ".partial")
        command = f"cat > {partial} && mv -f {partial} {shlex.quote(remote)}"
        done = self._ssh(command, DEFAULT_COMMAND_SECONDS, stdin=data)
        if done.returncode != 0:
            said = done.stderr.decode(errors="replace").strip()
            raise TargetError(f"{self.describe()}: copying {local} to {remote} failed: {said}")

    def get(self, remote: str, local: Path) -> None:
        done = self._ssh(f"cat {shlex.quote(remote)}", DEFAULT_COMMAND_SECONDS)
        if done.returncode != 0:
            said = done.stderr.decode(errors="replace").strip()
            raise TargetError(f"{self.describe()}: reading {remote} failed: {said}")
        local.write_bytes(done.stdout)

    def close(self) -> None:
        if self._opened:
            # Ends the master connection (-O exit); the board keeps running.
            subprocess.run(
                [*self._argv("-O", "exit")],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=CONNECT_SECONDS,
                check=False,
            )
            self._opened = False
        self._dir.cleanup()
