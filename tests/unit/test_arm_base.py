# SPDX-License-Identifier: MIT
"""The ARM base system's host-side recipe (boards/arm_base.py) on small fakes: which
packages, what the maintainer scripts' work becomes, extraction into a merged-/usr tree,
bytecode with guest paths. Booting the result is tests/board_arm and .ci/arm."""

from __future__ import annotations

import marshal
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_hwcrypto.boards import arm_base
from pytest_hwcrypto.boards.arm_base import Alternative
from pytest_hwcrypto.boards.base import BoardError

DUMPAVAIL = """Package: dash
Essential: yes
Priority: required
Description: POSIX shell
 a continuation line: Essential: yes

Package: python3
Priority: optional
Depends: python3.11

Package: coreutils
Essential: yes

Package: dash
Essential: yes
"""


def test_essential_packages_are_the_stanzas_marked_so_once_each() -> None:
    assert arm_base.essential_packages(DUMPAVAIL) == ["coreutils", "dash"]


def test_stanzas_keep_continuation_lines_in_their_field() -> None:
    first = arm_base.stanzas(DUMPAVAIL)[0]
    assert first["Description"] == "POSIX shell\n a continuation line: Essential: yes"
    assert len(arm_base.stanzas(DUMPAVAIL)) == 4


POSTINST = """#!/bin/sh
set -e
update-alternatives --install /usr/bin/awk awk /usr/bin/mawk 5 \\
    --slave /usr/share/man/man1/awk.1.gz awk.1.gz /usr/share/man/man1/mawk.1.gz
update-alternatives --install "$BINPATH"/"$BINNAME" "$BINNAME" "$BINPATH"/w.procps 50
update-alternatives --install /usr/bin/pager pager /bin/more 50
"""


def test_only_literal_alternatives_are_taken_from_a_postinst() -> None:
    assert arm_base.literal_alternatives(POSTINST) == [
        Alternative("/usr/bin/awk", "awk", "/usr/bin/mawk", 5),
        Alternative("/usr/bin/pager", "pager", "/bin/more", 50),
    ]


def test_the_highest_priority_alternative_that_exists_is_chosen() -> None:
    offered = [
        Alternative("/usr/bin/awk", "awk", "/usr/bin/mawk", 5),
        Alternative("/usr/bin/awk", "awk", "/usr/bin/gawk", 10),
        Alternative("/usr/bin/awk", "awk", "/usr/bin/original-awk", 60),
    ]
    present = {"/usr/bin/mawk", "/usr/bin/gawk"}
    chosen = arm_base.chosen_alternatives(offered, present.__contains__)
    assert chosen == {"awk": offered[1]}


def test_shadowed_moves_the_passwords_out_of_passwd_and_group() -> None:
    passwd, shadow = arm_base.shadowed("root:*:0:0:root:/root:/bin/bash\nman:*:6:12::/:/x\n", 7)
    assert passwd == "root:x:0:0:root:/root:/bin/bash\nman:x:6:12::/:/x\n"
    lines = shadow.splitlines()
    assert [line.split(":")[:2] for line in lines] == [["root", "*"], ["man", "*"]]
    assert all(line.count(":") == 8 for line in lines)  # shadow(5): nine fields
    group, gshadow = arm_base.shadowed("root:*:0:\nshadow:*:42:\n", 2)
    assert group == "root:x:0:\nshadow:x:42:\n"
    assert gshadow == "root:*::\nshadow:*::\n"  # gshadow(5): four fields


def test_dpkg_status_marks_each_package_installed_sorted_by_name() -> None:
    status = arm_base.dpkg_status(
        ["Package: zlib1g\nVersion: 1\n", "Package: bash\nVersion: 5.2\nEssential: yes\n"]
    )
    assert status.startswith("Package: bash\nStatus: install ok installed\nVersion: 5.2\n")
    assert "\n\nPackage: zlib1g\nStatus: install ok installed\nVersion: 1\n\n" in status
    with pytest.raises(BoardError, match="not Package"):
        arm_base.dpkg_status(["Version: 1\n"])


def test_python_minor_comes_from_the_libpython_minimal_package() -> None:
    assert arm_base.python_minor(["bash", "libpython3.11-minimal", "python3"]) == (3, 11)
    assert arm_base.python_minor(["bash"]) is None


def _fake_tree(root: Path) -> Path:
    tree = root / "tree"
    for directory in ("etc", "var/run", "var/lock", "usr/bin", "usr/share/base-files"):
        (tree / directory).mkdir(parents=True)
    (tree / "var" / "run" / "leftover").write_text("")
    masters = tree / "usr" / "share" / "base-passwd"
    masters.mkdir(parents=True)
    (masters / "passwd.master").write_text("root:*:0:0:root:/root:/bin/bash\n")
    (masters / "group.master").write_text("root:*:0:\nshadow:*:42:\n")
    (tree / "usr" / "share" / "base-files" / "profile").write_text("# profile\n")
    (tree / "usr" / "bin" / "mawk").write_text("")
    return tree


def test_configure_writes_what_the_maintainer_scripts_would(tmp_path: Path) -> None:
    tree = _fake_tree(tmp_path)
    arm_base.configure(tree, [("Package: mawk\nVersion: 1.3\n", POSTINST)])
    assert (tree / "etc" / "passwd").read_text() == "root:x:0:0:root:/root:/bin/bash\n"
    assert (tree / "etc" / "shadow").stat().st_mode & 0o777 == 0o640
    assert (tree / "etc" / "profile").read_text() == "# profile\n"
    assert (tree / "var" / "run").readlink() == Path("/run")
    assert (tree / "var" / "lock").readlink() == Path("/run/lock")
    assert (tree / "run" / "lock").stat().st_mode & 0o7777 == 0o1777
    # awk's target exists in the tree, pager's (/bin/more) does not
    assert (tree / "usr" / "bin" / "awk").readlink() == Path("/etc/alternatives/awk")
    assert (tree / "etc" / "alternatives" / "awk").readlink() == Path("/usr/bin/mawk")
    assert not (tree / "etc" / "alternatives" / "pager").is_symlink()
    status = (tree / "var" / "lib" / "dpkg" / "status").read_text()
    assert status.startswith("Package: mawk\nStatus: install ok installed\n")


def _deb(root: Path, name: str, files: dict[str, str]) -> Path:
    package = root / name
    (package / "DEBIAN").mkdir(parents=True)
    (package / "DEBIAN" / "control").write_text(
        f"Package: {name}\nVersion: 1\nArchitecture: all\nMaintainer: x <x@example.org>\n"
        "Description: test\n"
    )
    (package / "DEBIAN" / "postinst").write_text(
        f"#!/bin/sh\nupdate-alternatives --install /usr/bin/{name} {name} /bin/{name}-real 1\n"
    )
    (package / "DEBIAN" / "postinst").chmod(0o755)
    for path, text in files.items():
        (package / path).parent.mkdir(parents=True, exist_ok=True)
        (package / path).write_text(text)
    subprocess.run(
        ["dpkg-deb", "--root-owner-group", "-b", str(package), str(root / f"{name}.deb")],
        check=True,
        capture_output=True,
    )
    return root / f"{name}.deb"


@pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="dpkg-deb (apt-get install dpkg)")
def test_extract_makes_a_merged_usr_tree_without_docs(tmp_path: Path) -> None:
    deb = _deb(
        tmp_path,
        "tool",
        {
            "bin/tool-real": "#!/bin/sh\n",
            "usr/share/man/man1/tool.1": "manual",
            "usr/share/doc/tool/copyright": "licence",
            "usr/share/doc/tool/changelog": "history",
            "usr/share/locale/de/LC_MESSAGES/tool.mo": "",
        },
    )
    tree = tmp_path / "root"
    controls = arm_base.extract([deb], tree, lambda line: None, "qemu-arm64")
    assert (tree / "bin").readlink() == Path("usr/bin")  # still merged after the package's /bin
    assert (tree / "usr" / "bin" / "tool-real").read_text() == "#!/bin/sh\n"
    assert (tree / "usr" / "share" / "doc" / "tool" / "copyright").read_text() == "licence"
    assert not (tree / "usr" / "share" / "doc" / "tool" / "changelog").exists()
    assert not (tree / "usr" / "share" / "man" / "man1" / "tool.1").exists()
    assert not (tree / "usr" / "share" / "locale" / "de").exists()
    [(control, postinst)] = controls
    assert control.startswith("Package: tool\n")
    assert arm_base.literal_alternatives(postinst)[0].path == "/bin/tool-real"


def test_bytecode_is_compiled_on_the_host_with_the_guest_paths(tmp_path: Path) -> None:
    guest = sys.version_info[:2]
    stdlib = tmp_path / "usr" / "lib" / f"python{guest[0]}.{guest[1]}"
    stdlib.mkdir(parents=True)
    (stdlib / "mod.py").write_text("VALUE = 1\n")
    (stdlib / "bad.py").write_text("print 'python 2'\n")  # a syntax-error fixture
    emulated: list[str] = []
    count = arm_base.compile_python(
        tmp_path, guest, lambda tree, command: emulated.append(command), print, "b"
    )
    assert count == 2 and emulated == []
    tag = sys.implementation.cache_tag
    code = marshal.loads((stdlib / "__pycache__" / f"mod.{tag}.pyc").read_bytes()[16:])
    assert code.co_filename == f"/usr/lib/python{guest[0]}.{guest[1]}/mod.py"
    assert not (stdlib / "__pycache__" / f"bad.{tag}.pyc").exists()


def test_another_python_minor_is_compiled_under_emulation(tmp_path: Path) -> None:
    emulated: list[str] = []
    other = (3, sys.version_info[1] + 1)
    arm_base.compile_python(tmp_path, other, lambda tree, cmd: emulated.append(cmd), print, "b")
    assert len(emulated) == 1 and "compileall" in emulated[0]
    assert f"/usr/lib/python3.{other[1]}" in emulated[0]


def test_debians_pip_is_staged_compiled_and_used_without_ensurepip(tmp_path: Path) -> None:
    import zipfile

    from pytest_hwcrypto.boards import arm_rootfs

    minor = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    (tmp_path / "usr" / "lib" / minor).mkdir(parents=True)
    wheels = tmp_path / "usr" / "share" / "python-wheels"
    wheels.mkdir(parents=True)
    with zipfile.ZipFile(wheels / "pip-23.0.1-py3-none-any.whl", "w") as archive:
        archive.writestr("pip/__init__.py", "VERSION = '23.0.1'\n")
    assert arm_rootfs.stage_pip(tmp_path)
    staged = tmp_path / arm_rootfs.STAGED_PIP.lstrip("/") / "pip"
    assert (staged / "__init__.py").is_file()
    tag = sys.implementation.cache_tag
    code = marshal.loads((staged / "__pycache__" / f"__init__.{tag}.pyc").read_bytes()[16:])
    assert code.co_filename == f"{arm_rootfs.STAGED_PIP}/pip/__init__.py"
    command = arm_rootfs.install_command("p.whl", True)
    assert "--without-pip" in command and f"PYTHONPATH={arm_rootfs.STAGED_PIP}" in command
    assert command.endswith(f"rm -r {arm_rootfs.STAGED_PIP} /tmp/p.whl")
    # no Debian pip wheel: venv's own ensurepip installs pip, as before
    assert not arm_rootfs.stage_pip(tmp_path / "elsewhere")
    assert "--without-pip" not in arm_rootfs.install_command("p.whl", False)
