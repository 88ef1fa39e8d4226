# SPDX-License-Identifier: MIT
"""The kernel's log as it is now (/dev/kmsg), for naming the kernel's own words in a failure.

/dev/kmsg hands out one record per read ("6,339,5140900,-;alg: ... failed\\n" plus
continuation lines), from the oldest still in the ring buffer; opened non-blocking, a read
with nothing left raises EAGAIN instead of waiting for the next message.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

DEV_KMSG = Path("/dev/kmsg")
RECORD_MAX = 8192  # a read shorter than a record fails with EINVAL; records are < 1 KiB


def record_text(record: bytes) -> str:
    """The message of one /dev/kmsg record, without its prefix and continuation lines."""
    text = record.decode("utf-8", "replace")
    _, _, message = text.partition(";")
    return message.split("\n", 1)[0]


def read_kernel_log(path: Path = DEV_KMSG) -> list[str]:
    """Every message still in the ring buffer; [] when the log cannot be read (no root)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return []
    lines = []
    try:
        while True:
            try:
                record = os.read(fd, RECORD_MAX)
            except BlockingIOError:
                break
            except OSError as error:
                if error.errno == errno.EPIPE:  # overwritten while reading: go on
                    continue
                break
            if not record:
                break
            lines.append(record_text(record))
    finally:
        os.close(fd)
    return lines
