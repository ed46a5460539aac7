"""Rig files: YAML on disk -> compiled ``Rig``. ``config/rigs/NAME.yaml`` ships the
standard rigs; ``load_rig("appendix_b")`` finds them by name (``egorec_ros.resources``)."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from egorec_ros import resources
from egorec_ros.rig.compile import RigError, compile_rig
from egorec_ros.rig.model import Rig


# the first line of a rig `egorec convert --suggest-rig` wrote (converter/suggest.py), then its TODO lines
SUGGESTED_FROM = "# Rig suggested from {bag} by `egorec convert --suggest-rig`."
_SUGGESTED = re.compile(r"^# Rig suggested from (.+) by `egorec convert --suggest-rig`\.$", re.M)
_TODO = re.compile(r"^# TODO: (.+)$", re.M)


def rig_path(name_or_path: str | Path) -> Path:
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or p.exists():
        if not p.is_file():
            raise RigError(f"rig file {p} does not exist")
        return p
    builtin = resources.builtin_rig(str(name_or_path))
    if builtin is not None:
        return builtin
    raise RigError(f"no rig file or built-in rig named {name_or_path!r}; built-in rigs: "
                   f"{', '.join(resources.builtin_rigs()) or '(none found)'}")


def load_rig(name_or_path: str | Path) -> Rig:
    path = rig_path(name_or_path)
    text = path.read_text(encoding="utf-8")
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise RigError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(doc, dict):
        raise RigError(f"{path}: a rig file is a mapping with 'devices'")
    suggested = _SUGGESTED.search(text)
    if suggested and not doc.get("devices"):
        todo = "; ".join(_TODO.findall(text)) or "no device found"
        raise RigError(f"{path} has no devices: it was suggested from {suggested.group(1)} by `egorec convert "
                       f"--suggest-rig`, which said: {todo}")
    doc.setdefault("name", path.stem)
    return compile_rig(doc, where=str(path))
