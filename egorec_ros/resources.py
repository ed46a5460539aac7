"""Where the built-in rigs (``config/rigs/*.yaml``) and our ``msg/*.msg`` files are,
however egorec_ros was installed. The one lookup for both; imports nothing heavy.

Searched in this order, first hit wins:

1. package data ``egorec_ros/data/{rigs,msg}``: a pip (wheel) install; setup.py copies
   the top-level ``config/rigs`` and ``msg`` folders there at build time (no symlinks,
   and ``msg/`` stays at the top level where the ROS package needs it);
2. the source checkout next to the package (``<repo>/config/rigs``, ``<repo>/msg``):
   an editable install, or running from a clone;
3. ``<prefix>/share/egorec_ros/{config/rigs,msg}`` for every prefix of
   ``$AMENT_PREFIX_PATH``: a colcon install (CMakeLists.txt installs ``config/`` there,
   rosidl installs ``msg/``); this is what ament_index's package share directory is;
4. ``<sys.prefix>/share/egorec_ros/...``: a prefix install of the ROS package layout.
"""
from __future__ import annotations

import os
import sys
from importlib import resources
from pathlib import Path

PACKAGE = "egorec_ros"
RIGS, MSGS, SRVS, CONFIG = "rigs", "msg", "srv", "config"
# where each resource lives in the source tree and under share/egorec_ros
_SHARE = {RIGS: Path("config") / "rigs", MSGS: Path("msg"), SRVS: Path("srv"), CONFIG: Path("config")}
_SUFFIX = {RIGS: ".yaml", MSGS: ".msg", SRVS: ".srv", CONFIG: ".xml"}
_SOURCE = Path(__file__).resolve().parents[1]      # the checkout, when the package runs from one


def search_dirs(kind: str) -> list[Path]:
    """Folders that may hold resources of ``kind`` (RIGS or MSGS), most specific first."""
    rel = _SHARE[kind]
    dirs = [Path(str(resources.files(PACKAGE))) / "data" / kind, _SOURCE / rel]
    for prefix in filter(None, os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)):
        dirs.append(Path(prefix) / "share" / PACKAGE / rel)
    dirs.append(Path(sys.prefix) / "share" / PACKAGE / rel)
    return dirs


def find_dir(kind: str, names: tuple[str, ...] = ()) -> Path | None:
    """The first folder holding every one of ``names`` (or, without names, any file of the kind)."""
    suffix = _SUFFIX[kind]
    for d in search_dirs(kind):
        if names and all((d / f"{n}{suffix}").is_file() for n in names):
            return d
        if not names and d.is_dir() and any(d.glob(f"*{suffix}")):
            return d
    return None


def builtin_rigs() -> list[str]:
    """Names of the built-in rigs (from the first folder that has any)."""
    d = find_dir(RIGS)
    return sorted(p.stem for p in d.glob("*.yaml")) if d else []


def builtin_rig(name: str) -> Path | None:
    """The file of built-in rig ``name``, or None."""
    d = find_dir(RIGS, (name,))
    return d / f"{name}.yaml" if d else None


def msg_dir(names: tuple[str, ...]) -> Path:
    """The folder with all our .msg files ``names``; FileNotFoundError saying where it looked."""
    d = find_dir(MSGS, names)
    if d is None:
        raise FileNotFoundError(
            f"the {PACKAGE} message definitions ({', '.join(n + '.msg' for n in names)}) were not found in "
            f"{', '.join(str(d) for d in search_dirs(MSGS))}; reinstall {PACKAGE} (pip install . ships them "
            f"as package data; colcon installs them to share/{PACKAGE}/msg)")
    return d


def srv_dir(names: tuple[str, ...]) -> Path:
    """The folder with all our .srv files ``names``; FileNotFoundError saying where it looked."""
    d = find_dir(SRVS, names)
    if d is None:
        raise FileNotFoundError(
            f"the {PACKAGE} service definitions ({', '.join(n + '.srv' for n in names)}) were not found in "
            f"{', '.join(str(d) for d in search_dirs(SRVS))}; reinstall {PACKAGE}")
    return d


def config_file(name: str) -> Path:
    """A shipped config file (``config/<name>``, e.g. the Cyclone DDS XML files)."""
    stem = Path(name).stem
    d = find_dir(CONFIG, (stem,))
    if d is None:
        raise FileNotFoundError(f"{name} not found in {', '.join(str(d) for d in search_dirs(CONFIG))}; "
                                f"reinstall {PACKAGE}")
    return d / name
