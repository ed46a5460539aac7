"""--suggest-rig: a rig file from a bag's topics that compiles and converts the bag."""
from __future__ import annotations


import numpy as np
import yaml

from egorec_ros.assembly.sample import Sample
from egorec_ros.bags.bagfile import open_bag
from egorec_ros.bags.bagwrite import write_bag
from egorec_ros.converter.plan import plan_topics
from egorec_ros.converter.samples import iter_samples
from egorec_ros.converter.suggest import suggest_rig
from egorec_ros.rig.compile import compile_rig
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import StreamSpec
from helpers.bags import BAGS, requires_public_bags

T0 = 1_700_000_000 * 10**9


@requires_public_bags
def test_tiny_svo_suggestion_compiles_and_converts_the_bag():
    with open_bag(BAGS / "tiny_svo.bag") as bag:
        suggestion = suggest_rig(bag)
        assert suggestion.compiles, suggestion.todo
        doc = yaml.safe_load(suggestion.text)
        rig = compile_rig(doc, where="suggested")
        ego = doc["devices"]["ego"]
        assert ego["kind"] == "s80m" and ego["role"] == "ego"
        assert ego["streams"] == {"left": {"topic": "/camera/image_raw", "width": 752, "height": 480},
                                  "imu": {"topic": "/imu/data"}, "slam": {"topic": "/Rig"}}
        assert ego["calibration"]["resolution"] == [752, 480]
        assert ego["calibration"]["left_camera"]["intrinsic"][0] > 100
        assert "#   /imu/magnetometer (geometry_msgs/msg/Vector3Stamped, 35 messages)" in suggestion.text
        assert "#   /rosout (rosgraph_msgs/msg/Log, 6 messages)" in suggestion.text
        samples = list(iter_samples(bag, plan_topics(bag, rig.streams.values())))
    assert len(samples) == 87
    assert rig.videos[0].key == "stereo_left" and (rig.videos[0].width, rig.videos[0].height) == (752, 480)


@requires_public_bags
def test_aruco_suggestion_reads_the_jpeg_size_and_camera_info():
    with open_bag(BAGS / "aruco_images.bag") as bag:
        suggestion = suggest_rig(bag)
    doc = yaml.safe_load(suggestion.text)
    (cam,) = doc["devices"].values()
    assert cam["kind"] == "uvc" and cam["streams"]["rgb"]["width"] == 1280 and cam["streams"]["rgb"]["height"] == 960
    assert cam["calibration"]["resolution"] == [1280, 960]
    compile_rig(doc)


def latest(sid: str, topic: str, *fields: str) -> StreamSpec:
    device, role = sid.split(".")
    return StreamSpec(id=sid, device=device, role=role, kind=StreamKind.LATEST, topic=topic,
                      columns={f: f for f in fields})


def test_grippers_gloves_and_d435_are_recognised(tmp_path):
    def stream(sid, kind, topic):
        device, role = sid.split(".")
        return StreamSpec(id=sid, device=device, role=role, kind=kind, topic=topic)
    streams = [
        stream("g.rgb", StreamKind.VIDEO, "/gripper_1/rgb"),
        latest("g.lf", "/gripper_1/left_force", "force"), latest("g.rf", "/gripper_1/right_force", "force"),
        latest("g.st", "/gripper_1/state", "state"), stream("g.slam", StreamKind.TRAJECTORY, "/gripper_1/slam"),
        latest("lg.p", "/left_glove/frame", "pressure", "imu_quat", "imu_valid"),
        latest("lg.h", "/left_glove/hand_pose", "hand_pose"), latest("rg.p", "/right_glove/frame", "pressure"),
        stream("d.rgb", StreamKind.VIDEO, "/d435/color/image_raw"),
        stream("d.depth", StreamKind.DEPTH, "/d435/depth/image_rect_raw"),
    ]
    shapes = {"force": (3,), "state": (3,), "pressure": (16, 16), "imu_quat": (16, 4), "imu_valid": (16,),
              "hand_pose": (21, 3)}
    samples = []
    for i, s in enumerate(streams):
        if s.kind is StreamKind.VIDEO:
            payload = np.zeros((48, 64, 3), np.uint8)
        elif s.kind is StreamKind.DEPTH:
            payload = np.zeros((24, 32), np.uint16)
        elif s.kind is StreamKind.TRAJECTORY:
            payload = np.r_[1.0, 0, 0, 0, 0, 0, 0, 1]
        else:
            payload = {f: np.zeros(shapes[f], np.float32) for f in s.columns}
        samples.append(Sample(s.id, T0 + i, T0 + i, payload))
    path = write_bag(tmp_path / "rig_bag", samples, streams)
    with open_bag(path) as bag:
        suggestion = suggest_rig(bag)
        assert suggestion.compiles, suggestion.todo
        doc = yaml.safe_load(suggestion.text)
        rig = compile_rig(doc)
        plan = plan_topics(bag, rig.streams.values())
    devices = doc["devices"]
    assert {d["kind"] for d in devices.values()} == {"gripper", "usb_glove", "ble_glove", "d435"}
    gripper = next(d for d in devices.values() if d["kind"] == "gripper")
    assert gripper["streams"]["left_force"] == {"topic": "/gripper_1/left_force"}
    assert gripper["streams"]["right_force"] == {"topic": "/gripper_1/right_force"}
    assert gripper["streams"]["slam"] == {"topic": "/gripper_1/slam"}
    assert devices["left_glove"]["streams"]["hand_pose"] == {"topic": "/left_glove/hand_pose"}
    d435 = next(d for d in devices.values() if d["kind"] == "d435")
    assert d435["streams"]["depth"] == {"topic": "/d435/depth/image_rect_raw", "width": 32, "height": 24}
    assert plan.unmapped == () and plan.missing == ()


@requires_public_bags
def test_nothing_recognisable_says_what_to_fill_in():
    with open_bag(BAGS / "rosbag2parquet_array_msgs") as bag:
        suggestion = suggest_rig(bag)
    assert not suggestion.compiles and "no camera topic found" in suggestion.todo[0]
    assert suggestion.text.startswith("# Rig suggested from") and "# TODO: no camera topic found" in suggestion.text
    assert "#   /one_shot/joint_state (sensor_msgs/msg/JointState, 1 messages)" in suggestion.text


@requires_public_bags
def test_undecodable_camera_is_left_out_with_a_note():
    with open_bag(BAGS / "rosbags_rs_test_bag_mcap") as bag:      # both its images are invalid on purpose
        suggestion = suggest_rig(bag)
    (todo,) = suggestion.todo
    assert todo.startswith(f"no camera topic found in {BAGS / 'rosbags_rs_test_bag_mcap'}: its image topics cannot "
                           "be used (see the NOTE lines). A rig needs at least one camera")
    for topic in ("/test/sensor_msgs/compressed_image", "/test/sensor_msgs/image"):
        assert any(f"{topic} left out" in n for n in suggestion.notes)
        assert f"# NOTE: image topic {topic} left out" in suggestion.text
    assert yaml.safe_load(suggestion.text)["devices"] == {}


def test_odd_image_sizes_are_a_todo(tmp_path):
    cam = StreamSpec(id="c.rgb", device="c", role="rgb", kind=StreamKind.VIDEO, topic="/odd/image")
    path = write_bag(tmp_path / "odd", [Sample(cam.id, T0, T0, np.zeros((47, 63, 3), np.uint8))], [cam])
    with open_bag(path) as bag:
        suggestion = suggest_rig(bag)
    assert not suggestion.compiles and "63x47; 4:2:0 video needs even sizes" in suggestion.todo[0]
    assert "# TODO: suggested rig: video stream" in suggestion.text
