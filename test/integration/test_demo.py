"""`egorec demo` (the README's first command): records, validates and reports on built-in
defaults, at the largest size this machine's encoders keep up with."""
from __future__ import annotations

import argparse
import json
from types import SimpleNamespace

from egorec_ros.cli import demo_cmd, record_cmd
from egorec_ros.codecs.capacity import OVERLOAD
from helpers.cli import egorec


def test_demo_records_a_clean_dataset_and_its_report(tmp_path):
    out = egorec("demo", "--out", tmp_path, "--episodes", "1", "--seconds", "1")
    assert out.returncode == 0, out.stdout + out.stderr
    task = tmp_path / demo_cmd.TASK
    assert f"{task}: clean" in out.stdout
    assert (tmp_path / f"{demo_cmd.TASK}_report.html").stat().st_size > 10_000
    cameras = json.loads((task / "meta" / "info.json").read_text())["cameras"]
    sizes = {f"{c['width']}x{c['height']}" for c in cameras.values()}
    assert len(sizes) == 1 and sizes <= set(demo_cmd.SIZES)
    for size in demo_cmd.SIZES[:demo_cmd.SIZES.index(sizes.pop())]:    # each larger size was refused, aloud
        assert f"cannot keep up with Appendix B at {size}" in out.stdout


def test_the_demo_steps_down_while_the_encoders_would_fall_behind(monkeypatch, capsys):
    loads = {(640, 480): 1.5, (480, 360): 0.9, (320, 240): 0.4}    # of the machine, per size
    monkeypatch.setattr(record_cmd, "plan_for", lambda rig, args: SimpleNamespace(
        load=loads[tuple(args.size)], overloaded=loads[tuple(args.size)] > OVERLOAD))
    args = demo_cmd.demo_record_args(argparse.Namespace(episodes=1, seconds=1.0, out="x"))
    assert tuple(args.size) == (320, 240) and args.depth == "mkv"
    said = capsys.readouterr().out
    assert "at 640x480 (they need 1.50x" in said and "at 480x360 (they need 0.90x" in said
