"""requirements-ros.txt (the README's install for a ROS 2 machine) holds every dependency of the
package except numpy and PyYAML, which come from ROS's system packages there."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FROM_ROS = {"numpy", "pyyaml"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def install_requires() -> set[str]:
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "install_requires":
            return {_name(ast.literal_eval(e)) for e in node.value.elts}   # type: ignore[attr-defined]
    raise AssertionError("setup.py has no install_requires")


def test_requirements_ros_lists_every_dependency_ros_does_not_bring() -> None:
    lines = (ROOT / "requirements-ros.txt").read_text().splitlines()
    listed = {_name(line) for line in lines if line.strip() and not line.startswith("#")}
    assert install_requires() - FROM_ROS - listed == set(), "add these to requirements-ros.txt"
    assert listed - install_requires() == set(), "requirements-ros.txt lists what setup.py does not need"
