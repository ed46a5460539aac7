"""Issue 10 item 24: drop counts come with their share and a judgement (ok / HIGH above 5 %)
in the CLI summaries and the HTML report; the report explains its columns, warns about
streams that repeat or lose too much, shows the conversion's clock notes, and its charts
keep title, legend and plot apart."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np

from egorec_ros.assembly.counts import MEANINGS, StreamCounts, high, judged
from egorec_ros.report.html import write_report
from egorec_ros.report.svg import line_chart
from helpers.cli import egorec
from helpers.message_bags import camera_messages, write_messages

RIG = ("name: r\ndevices:\n  cam: {kind: uvc, streams: {rgb: {topic: /cam/image_raw, width: 64, height: 48}}}\n")


def test_problem_counts_are_judged_against_five_percent():
    counts = {"received": 1000, "used": 900, "late": 40, "repeated": 100, "superseded": 60}
    assert judged(counts) == "repeated 100 (10.0 %, HIGH), late 40 (4.0 %, ok)"
    assert high(counts) == {"repeated": 0.1}
    assert set(MEANINGS) == set(StreamCounts().__dataclass_fields__)       # every count is explained


def test_a_camera_missing_every_other_frame_is_judged_high_in_summary_and_report(tmp_path):
    frames = [m for i, m in enumerate(camera_messages("/cam/image_raw", None, frames=60)) if i % 2 == 0]
    folder = write_messages(tmp_path / "halved", frames)
    rig = tmp_path / "rig.yaml"
    rig.write_text(RIG)
    done = egorec("convert", folder, "--rig", rig, "--task", "conv", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    drops = next(line for line in done.stdout.splitlines() if line.startswith("  drops: "))
    assert re.fullmatch(r"  drops: cam\.rgb repeated 29 \(49\.\d %, HIGH\)", drops), drops

    page = write_report(tmp_path / "out" / "conv", tmp_path / "report.html").read_text()
    banner = page.split("<div class='banner'>")[1].split("</div>")[0]
    assert "<b>⚠ Streams with more than 5 % of their rows repeated or samples lost</b>" in banner
    assert re.search(r"<li>episode 1: cam\.rgb repeated 49\.\d %</li>", banner)
    assert all(f"<dt>{k}</dt>" in page for k in MEANINGS)
    assert "<th title='of used: arrived after its own row&#x27;s deadline, so it went into a later row'>delayed</th>" \
        in page and ">restamped</th>" in page
    assert re.search(r"<td class='bad'>29 \(49\.\d %\)</td>", page)
    assert "<p>conversion notes (clocks):</p><ul class='notes'><li>clock of cam.rgb: header stamps 0.001 s before " \
           "bag time</li></ul>" in page


def test_a_clean_task_has_no_banner(tmp_path):
    folder = write_messages(tmp_path / "clean", camera_messages("/cam/image_raw", None, frames=30))
    rig = tmp_path / "rig.yaml"
    rig.write_text(RIG)
    assert egorec("convert", folder, "--rig", rig, "--task", "conv", "--out", tmp_path / "out").returncode == 0
    page = write_report(tmp_path / "out" / "conv", tmp_path / "report.html").read_text()
    assert "class='banner'" not in page


def test_chart_title_legend_and_plot_do_not_overlap():
    t = np.linspace(0, 4, 200)
    labels = ["gripper_left_force", "gripper_right_force", "gripper_2_gripper_left_force",
              "gripper_2_gripper_right_force"]
    svg = ET.fromstring(line_chart([(label, t, t * (i + 1)) for i, label in enumerate(labels)],
                                   title="finger force |F| (mN) over time (s) " * 3))
    ns = "{http://www.w3.org/2000/svg}"
    texts = svg.findall(f"{ns}text") or svg.findall("text")
    rect = (svg.findall(f"{ns}rect") or svg.findall("rect"))[0]
    top, bottom = float(rect.get("y")), float(rect.get("y")) + float(rect.get("height"))
    title, *legend, ranges = texts
    assert title.text.endswith("…") and len(title.text) * 6.2 <= 420
    assert [t.text for t in legend] == labels
    assert all(float(t.get("y")) < top for t in [title, *legend])
    rows = {}
    for t in legend:                       # entries sharing a row do not overlap each other
        rows.setdefault(t.get("y"), []).append((float(t.get("x")), t.text))
    assert len(rows) > 1
    for entries in rows.values():
        assert all(b[0] - a[0] >= len(a[1]) * 6.2 for a, b in zip(sorted(entries), sorted(entries)[1:]))
    assert float(ranges.get("y")) > bottom
    for line in svg.findall(f"{ns}polyline") or svg.findall("polyline"):
        ys = [float(p.split(",")[1]) for p in line.get("points").split()]
        assert top <= min(ys) and max(ys) <= bottom
