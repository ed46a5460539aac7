"""Issue 10 item 16: a rig device without ``key:`` gets an invented identity; that is
warned about (§5.2 rule 3), once per rig file and device, naming both."""
from __future__ import annotations

import logging

from egorec_ros.rig.load import load_rig

RIG = """\
name: keyless
fps: 30
devices:
  cam0:
    kind: uvc
    streams:
      rgb: {topic: /cam0/image_raw, width: 64, height: 48}
  cam1:
    kind: uvc
    key: "uvc:usb-serial-1234"
    streams:
      rgb: {topic: /cam1/image_raw, width: 64, height: 48}
"""


def test_a_device_without_key_is_warned_about_once_naming_file_and_device(tmp_path, caplog):
    path = tmp_path / "keyless.yaml"
    path.write_text(RIG, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="egorec_ros.rig"):
        rig = load_rig(path)
        load_rig(path)   # the same file again (a second episode, a conversion worker): no repeat
    assert {d.id: d.key for d in rig.devices} == {"cam0": "uvc:cam0", "cam1": "uvc:usb-serial-1234"}
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert str(path) in warnings[0] and "'cam0'" in warnings[0] and "uvc:cam0" in warnings[0]
    assert "key:" in warnings[0] and "§5.2" in warnings[0]


def test_builtin_rigs_give_every_device_a_key(caplog):
    with caplog.at_level(logging.WARNING, logger="egorec_ros.rig"):
        for name in ("appendix_b", "uvc_pair", "d435_single", "gripper_single"):
            load_rig(name)
    assert not [r for r in caplog.records if "key:" in r.getMessage()]
