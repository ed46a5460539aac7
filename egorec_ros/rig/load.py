"""Rig files: YAML on disk -> compiled ``Rig``. ``config/rigs/NAME.yaml`` ships the
standard rigs; ``load_rig("appendix_b")`` finds them by name (``egorec_ros.resources``)."""
from __future__ import annotations

from pathlib import Path

import yaml

from egorec_ros import resources
from egorec_ros.rig.compile import RigError, compile_rig
from egorec_ros.rig.model import Rig


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
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise RigError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(doc, dict):
        raise RigError(f"{path}: a rig file is a mapping with 'devices'")
    doc.setdefault("name", path.stem)
    return compile_rig(doc, where=str(path))
