"""Built-in rigs and our .msg files are found from an editable install (the source
checkout), a pip install (package data) and a colcon install (share/egorec_ros under
$AMENT_PREFIX_PATH); the version lives in one place."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from egorec_ros import resources
from egorec_ros.messages.definitions import NAMES
from egorec_ros.version import __version__
from helpers.bags import REPO


RIGS = sorted(p.stem for p in (REPO / "config" / "rigs").glob("*.yaml"))
# a new process: which egorec_ros it imported, where its rigs and msgs come from, and a bare-name rig load
PROBE = ("import egorec_ros, sys; from egorec_ros import resources as r; from egorec_ros.rig.load import load_rig; "
         "print(egorec_ros.__file__); print(r.find_dir(r.RIGS)); print(r.msg_dir(%r)); "
         "print(','.join(r.builtin_rigs())); print(load_rig('appendix_b').name)" % (NAMES,))


def probe(env: dict[str, str], cwd: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, env=env, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_editable_install_reads_the_top_level_folders(tmp_path):
    package, rigs, msgs, names, rig = probe(dict(os.environ), tmp_path)
    assert Path(package).parent == REPO / "egorec_ros"
    assert (Path(rigs), Path(msgs)) == (REPO / "config" / "rigs", REPO / "msg")
    assert names.split(",") == RIGS and rig == "appendix_b"


@pytest.mark.slow
def test_a_pip_install_ships_rigs_and_msgs_as_package_data(tmp_path):
    target = tmp_path / "site"
    build = tmp_path / "src"      # a copy, so pip's build folder stays out of the worktree
    shutil.copytree(REPO, build, ignore=shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", "test",
                                                                "bench", ".hypothesis", ".pytest_cache"))
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                           "--target", str(target), str(build)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    data = target / "egorec_ros" / "data"
    assert sorted(p.name for p in (data / "rigs").iterdir()) == [f"{n}.yaml" for n in RIGS]
    assert all((data / "msg" / f"{n}.msg").is_file() for n in NAMES)
    shutil.rmtree(build)          # the install must not need its source
    package, rigs, msgs, names, rig = probe({**os.environ, "PYTHONPATH": str(target)}, tmp_path)
    assert Path(package) == target / "egorec_ros" / "__init__.py"
    assert (Path(rigs), Path(msgs)) == (data / "rigs", data / "msg")
    assert names.split(",") == RIGS and rig == "appendix_b"


def test_a_colcon_install_is_found_through_ament_prefix_path(tmp_path, monkeypatch):
    """The layout CMakeLists.txt (config/) and rosidl (msg/) install into a colcon prefix."""
    share = tmp_path / "install" / "egorec_ros" / "share" / "egorec_ros"
    shutil.copytree(REPO / "config" / "rigs", share / "config" / "rigs")
    shutil.copytree(REPO / "msg", share / "msg")
    (share / "config" / "rigs" / "colcon_only.yaml").write_text("devices: {}\n")
    monkeypatch.setenv("AMENT_PREFIX_PATH", os.pathsep.join(["/opt/ros/humble", str(share.parents[1])]))
    monkeypatch.setattr(resources, "_SOURCE", tmp_path / "no_checkout")     # as installed: no source tree
    assert resources.find_dir(resources.RIGS) == share / "config" / "rigs"
    assert resources.builtin_rig("colcon_only") == share / "config" / "rigs" / "colcon_only.yaml"
    assert resources.msg_dir(NAMES) == share / "msg"


def test_the_version_is_stated_once_and_package_xml_matches_it():
    assert re.search(r"<version>([^<]+)</version>", (REPO / "package.xml").read_text()).group(1) == __version__
    assert "version=version()" in (REPO / "setup.py").read_text()
