"""Issue 10 item 10: the start-up encoder probe. Hardware encoders this FFmpeg carries are
really opened (this machine has none: each must fail gracefully, with a reason); the
decision logic is tested with probe results given; the summary and live warnings say
what to do."""
from __future__ import annotations

import av
import pytest

from egorec_ros.codecs import capacity
from egorec_ros.codecs.capacity import EncoderProbe, StreamNeed, advice, choose_codec, plan_encoding
from egorec_ros.codecs.video import VideoCodec, encoder_settings, open_video_writer
from egorec_ros.recorder.overload import episode_warnings, live_warning


def test_hardware_encoders_fail_to_open_gracefully_with_a_reason():
    carried = [n for n in capacity.HARDWARE_ENCODERS["h264"] if n in av.codecs_available]
    if not carried:
        pytest.skip("this PyAV's FFmpeg carries no hardware H.264 encoder")
    probes = capacity.hardware_probes(VideoCodec("h264"), 320, 240)
    assert set(probes) == set(capacity.HARDWARE_ENCODERS["h264"])
    usable = [n for n, p in probes.items() if p.ok]
    if usable:
        pytest.skip(f"this machine has a hardware encoder ({usable[0]}): the fallback path is not reachable")
    for name, result in probes.items():
        assert result.reason, name
        assert ("does not open" in result.reason) == (name in av.codecs_available), (name, result.reason)
    codec, notes = choose_codec(VideoCodec("h264"), probes)
    assert codec.encoder is None and "libx264 (software)" in notes[0]
    assert all(any(name in line for line in notes) for name in probes), "every reason is in the log"


def test_a_hardware_encoder_that_probes_ok_is_chosen_and_its_settings_are_used():
    probes = {"h264_nvenc": EncoderProbe("h264_nvenc", False, reason="does not open: PermissionError"),
              "h264_qsv": EncoderProbe("h264_qsv", True, fps=400.0),
              "h264_v4l2m2m": EncoderProbe("h264_v4l2m2m", True, fps=200.0)}
    codec, notes = choose_codec(VideoCodec("h264", gop=10), probes)
    assert codec.encoder == "h264_qsv" and "h264_qsv" in notes[0]
    settings = encoder_settings(codec)
    assert settings.encoder == "h264_qsv" and settings.options["g"] == "10" and settings.options["bf"] == "0"
    with pytest.raises(ValueError, match="does not encode h264"):
        VideoCodec("h264", encoder="hevc_nvenc")


def test_a_hardware_encoder_that_fails_for_real_falls_back_when_writing():
    """The writer itself refuses an encoder the machine lacks with FFmpeg's reason (so the
    probe, which decides before recording, is what keeps a recording from failing)."""
    name = next((n for n in capacity.HARDWARE_ENCODERS["h264"] if n in av.codecs_available), None)
    if name is None:
        pytest.skip("no hardware H.264 encoder in this FFmpeg")
    if capacity.hardware_probes(VideoCodec("h264"), 64, 48)[name].ok:
        pytest.skip(f"{name} works on this machine")
    with pytest.raises(av.error.FFmpegError):
        open_video_writer("/tmp/never.mp4", 64, 48, 30, VideoCodec("h264", encoder=name))


def _probe_at(fps_by_encoder):
    return lambda settings, w, h: EncoderProbe(settings.encoder, True, fps=fps_by_encoder[settings.encoder] * 320 * 240 / (w * h))


def test_the_load_estimate_adds_the_streams_and_warns_past_the_threshold():
    streams = [StreamNeed("left", "rgb", 320, 240, 30), StreamNeed("right", "rgb", 320, 240, 30),
               StreamNeed("depth", "depth", 320, 240, 30)]
    no_hw = lambda codec, w, h: {}  # noqa: E731
    fine = plan_encoding(streams, VideoCodec("h264"), "mkv", probe_fn=_probe_at({"libx264": 300, "ffv1": 150}),
                         hardware_fn=no_hw)
    assert fine.load == pytest.approx(0.1 + 0.1 + 0.2) and not fine.overloaded
    slow = plan_encoding(streams, VideoCodec("h264"), "mkv", probe_fn=_probe_at({"libx264": 50, "ffv1": 40}),
                         hardware_fn=no_hw)
    assert slow.overloaded and slow.load == pytest.approx(0.6 + 0.6 + 0.75)
    text = advice(slow)
    assert "depth" in text and "--size" in text and "--depth mkv" in text and "--codec h264" in text
    # large streams are probed at a reduced size and scaled by the pixel ratio
    big = plan_encoding([StreamNeed("cam", "rgb", 1280, 960, 30)], VideoCodec("h264"), probe_fn=_probe_at({"libx264": 300}),
                        hardware_fn=no_hw)
    assert big.load == pytest.approx(30 / (300 * 320 * 240 / (1280 * 960)), rel=0.02)
    assert "probed at" in big.notes[-1]


def test_the_real_probe_measures_and_is_cached_per_process():
    streams = [StreamNeed("cam", "rgb", 160, 120, 30)]
    plan = plan_encoding(streams, VideoCodec("h264"))
    assert plan.load > 0 and plan.codec.name == "h264"
    settings = encoder_settings(plan.codec)
    assert capacity.probe(settings, 160, 120) is capacity.probe(settings, 160, 120)


def test_live_and_summary_warnings_say_what_is_wrong_and_what_to_do():
    assert live_warning({"rows": 40, "cam": 3}, {"cam0.rgb": 2}, 60) == ""
    behind = live_warning({"rows": 0, "stereo_depth": 29}, {}, 10)
    assert "stereo_depth is 29 frames behind" in behind and "--depth mkv" in behind
    repeats = live_warning({}, {"cam0.rgb": 167}, 180)
    assert "cam0.rgb repeated 167 of 180 frames" in repeats and "--size" in repeats
    lines = episode_warnings({"cam0.rgb": {"used": 13, "repeated": 167}, "imu": {"used": 900}}, 180,
                             {"rows": 2, "stereo_depth": 30})
    assert lines[0].startswith("cam0.rgb repeated 167 of 180 frames (93 %)")
    assert "stereo_depth fell up to 30 frames behind" in lines[1] and "--codec h264" in lines[-1]
    assert episode_warnings({"cam0.rgb": {"used": 178, "repeated": 2}}, 180, {"cam": 4}) == []
