"""Issue 24 item 4: `record.launch.py sim:=true` (and the sim_devices node, `egorec sim-devices
--auto-size`) choose the simulated size as `egorec demo` does, unless a size is given."""
from __future__ import annotations

import py_compile
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from egorec_ros.cli import record_cmd, sim_size
from egorec_ros.codecs.capacity import OVERLOAD
from helpers.cli import egorec

LAUNCH = Path(__file__).parents[2] / "launch" / "record.launch.py"


def test_the_largest_size_the_machine_keeps_up_with_is_chosen_and_the_step_down_said(monkeypatch):
    loads = {(640, 480): 1.5, (480, 360): 0.9, (320, 240): 0.4}
    seen = []

    def plan_for(rig, args):
        seen.append(args.sim)
        load = loads[tuple(args.size)]
        return SimpleNamespace(load=load, overloaded=load > OVERLOAD)
    monkeypatch.setattr(record_cmd, "plan_for", plan_for)
    size, why = sim_size.choose("appendix_b")
    assert size == "320x240" and all(seen), "planned with the simulator counted"
    assert len(why) == 2 and "at 640x480" in why[0] and "1.50x" in why[0] and "at 480x360" in why[1]
    loads[(640, 480)] = 0.5
    assert sim_size.choose("appendix_b") == ("640x480", [])


def test_the_module_prints_the_size_for_the_launch_file():
    out = subprocess.run([sys.executable, "-m", "egorec_ros.cli.sim_size", "uvc_pair"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() in sim_size.SIZES
    bad = subprocess.run([sys.executable, "-m", "egorec_ros.cli.sim_size", "no_such_rig"], capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 1 and bad.stderr.startswith("egorec: ") and "Traceback" not in bad.stderr


def test_the_launch_file_asks_for_the_size_when_sim_is_true_and_size_is_not_given():
    py_compile.compile(str(LAUNCH), doraise=True)
    text = LAUNCH.read_text()
    assert '"-m", "egorec_ros.cli.sim_size"' in text and 'sim and not value["size"].strip()' in text


def test_sim_devices_refuses_a_size_and_auto_size_together():
    out = egorec("sim-devices", "--rig", "uvc_pair", "--size", "320x240", "--auto-size", timeout=60)
    assert out.returncode == 2 and "not both" in out.stderr and "Traceback" not in out.stderr
