"""Topic -> stream mapping checks, payload errors, unreadable messages, CameraInfo."""
from __future__ import annotations


import numpy as np
import pytest
from rosbags.rosbag1 import Writer as Ros1Writer

from egorec_ros.assembly.sample import Sample
from egorec_ros.bags.bagfile import open_bag
from egorec_ros.bags.bagwrite import write_bag
from egorec_ros.bags.errors import BagError
from egorec_ros.messages.errors import PayloadError, StreamMappingError
from egorec_ros.messages.payloads import forces, gloves
from egorec_ros.messages.payloads.camera_info import camera_calibration
from egorec_ros.messages.context import MessageContext
from egorec_ros.messages.payloads.stamps import header_message
from egorec_ros.converter.plan import plan_topics
from egorec_ros.converter.report import ReadReport
from egorec_ros.converter.samples import iter_samples
from egorec_ros.messages.typestores import ros1_typestore, ros2_typestore
from egorec_ros.rig.kinds import StreamKind
from egorec_ros.rig.model import StreamSpec
from helpers.bags import BAGS, requires_public_bags
from helpers.message_bags import write_messages

T0 = 1_700_000_000 * 10**9
STORE = ros2_typestore()


def spec(sid: str, kind: StreamKind, topic: str, columns: dict | None = None, **source) -> StreamSpec:
    device, role = sid.split(".")
    return StreamSpec(id=sid, device=device, role=role, kind=kind, topic=topic, columns=columns or {}, source=source)


IMU = spec("s.imu", StreamKind.IMU, "/imu")
FORCE = spec("g.left_force", StreamKind.LATEST, "/force", {"force": "observation.gripper_left_force"})


@pytest.fixture(scope="module")
def small_bag(tmp_path_factory):
    samples = [Sample(IMU.id, T0, T0, np.zeros(6, np.float32)),
               Sample(FORCE.id, T0 + 1, T0 + 1, {"force": np.ones(3, np.float32)})]
    return write_bag(tmp_path_factory.mktemp("map") / "small", samples, [IMU, FORCE])


@pytest.mark.parametrize("stream, expected", [
    (spec("cam.rgb", StreamKind.VIDEO, "/imu"),
     "topic /imu carries sensor_msgs/msg/Imu, which cannot feed stream 'cam.rgb' (video)"),
    (spec("g.state", StreamKind.LATEST, "/force", {"state": "observation.gripper_state"}),
     "with fields ['state']); types it accepts: egorec_ros/msg/GripperState"),
    (spec("e.slam", StreamKind.TRAJECTORY, "/imu"),
     "types it accepts: egorec_ros/msg/SlamPose, geometry_msgs/msg/PoseStamped"),
])
def test_a_type_that_cannot_feed_its_stream_is_refused(small_bag, stream, expected):
    with open_bag(small_bag) as bag, pytest.raises(StreamMappingError) as err:
        plan_topics(bag, [stream])
    assert expected in str(err.value) and str(small_bag) in str(err.value)


def test_tf_needs_a_child_frame(tmp_path):
    tf = spec("e.slam", StreamKind.TRAJECTORY, "/tf", child_frame="tcp")
    path = write_bag(tmp_path / "tf", [Sample(tf.id, T0, T0, np.r_[T0 / 1e9, 0, 0, 0, 0, 0, 0, 1.0])], [tf],
                     msgtypes={tf.id: "tf2_msgs/msg/TFMessage"})
    with open_bag(path) as bag:
        with pytest.raises(StreamMappingError, match="needs the option `child_frame`"):
            plan_topics(bag, [spec("e.slam", StreamKind.TRAJECTORY, "/tf")])
        other = spec("e.slam", StreamKind.TRAJECTORY, "/tf", child_frame="elsewhere")
        assert list(iter_samples(bag, plan_topics(bag, [other]))) == []      # frame absent: no samples


def test_plan_lists_unmapped_and_missing(small_bag):
    absent = spec("cam.rgb", StreamKind.VIDEO, "/camera")
    with open_bag(small_bag) as bag:
        plan = plan_topics(bag, [IMU, absent])
    assert [t.topic for t in plan.unmapped] == ["/force"] and plan.missing == (absent,)
    assert plan.lines() == ["/imu (sensor_msgs/msg/Imu) -> s.imu",
                            "not mapped /force (geometry_msgs/msg/WrenchStamped, 1 messages)",
                            "no data for stream cam.rgb (topic /camera)"]


def test_unknown_types_are_listed_and_skipped_but_refused_when_mapped(tmp_path):
    path = tmp_path / "unknown.bag"
    store = ros1_typestore()
    with Ros1Writer(path) as writer:
        imu = writer.add_connection("/imu", "sensor_msgs/msg/Imu", typestore=store)
        blob = writer.add_connection("/blob", "acme_msgs/msg/Blob", msgdef="acme_msgs/Missing part\n",
                                     md5sum="0" * 32)
        bad = writer.add_connection("/bad", "acme_msgs/msg/Bad", msgdef="int32 1x\n", md5sum="0" * 32)
        msg = store.types["sensor_msgs/msg/Imu"]
        writer.write(imu, T0, store.serialize_ros1(_ros1_imu(store, msg), "sensor_msgs/msg/Imu"))
        writer.write(blob, T0 + 1, b"\x01\x02")
        writer.write(bad, T0 + 2, b"\x01\x02")
    with open_bag(path) as bag:
        assert bag.topics["/blob"].problem == "its definition uses the unknown type acme_msgs/msg/Missing"
        assert "definition stored in the bag cannot be used" in bag.topics["/bad"].problem
        plan = plan_topics(bag, [IMU])
        assert [t.topic for t in plan.undecodable] == ["/bad", "/blob"]
        assert plan.lines()[2].startswith("skipped /blob (acme_msgs/msg/Blob, 1 messages)")
        assert len(list(iter_samples(bag, plan))) == 1
        with pytest.raises(StreamMappingError, match="/blob .*cannot be decoded"):
            plan_topics(bag, [spec("g.left_force", StreamKind.LATEST, "/blob", {"force": "f"})])


def _ros1_imu(store, cls):
    v = store.types["geometry_msgs/msg/Vector3"](x=0.0, y=0.0, z=9.8)
    return cls(header=header_message(store, T0), orientation=store.types["geometry_msgs/msg/Quaternion"](
        x=0.0, y=0.0, z=0.0, w=1.0), orientation_covariance=np.zeros(9), angular_velocity=v,
        angular_velocity_covariance=np.zeros(9), linear_acceleration=v, linear_acceleration_covariance=np.zeros(9))


def test_an_unreadable_message_is_a_bag_error_naming_topic_and_time(tmp_path):
    path = tmp_path / "broken"
    # CDR header, then almost nothing
    write_messages(path, [("/imu", "sensor_msgs/msg/Imu", T0 + 250_000_000, b"\x00\x01\x00\x00\x05")], mcap=True)
    with open_bag(path) as bag, pytest.raises(BagError) as err:
        list(iter_samples(bag, plan_topics(bag, [IMU])))
    text = str(err.value)
    assert str(path) in text and "/imu (sensor_msgs/msg/Imu)" in text and "1700000000.250000" in text


def test_payloads_that_do_not_fit_are_dropped_and_counted(tmp_path):
    matrix = spec("g.left_force_matrix", StreamKind.LATEST, "/matrix", {"matrix": "m"})
    path = tmp_path / "matrices"
    write_messages(path, [("/matrix", forces.FORCE_MATRIX, T0 + i, STORE.types[forces.FORCE_MATRIX](
        header=header_message(STORE, T0 + i), rows=2, cols=2, channels=3, data=np.arange(n, dtype=np.float32)))
        for i, n in enumerate((12, 10, 12))])                       # the middle one is short
    report = ReadReport("matrices")
    with open_bag(path) as bag:
        samples = list(iter_samples(bag, plan_topics(bag, [matrix]), report=report))
    assert [s.stamp_ns for s in samples] == [T0, T0 + 2]
    assert samples[0].payload["matrix"].shape == (2, 2, 3)
    drop = report.dropped[matrix.id]
    assert drop.count == 1 and drop.first_ns == T0 + 1 and "needs 12 values, has 10" in drop.first
    assert any("1 samples dropped" in line for line in report.lines())


def test_glove_payloads_with_and_without_imu():
    ctx = MessageContext("b", "/glove", T0)
    cls = STORE.types[gloves.GLOVE_FRAME]
    usb = cls(header=header_message(STORE, T0), pressure=np.arange(256, dtype=np.float32),
              imu_quat=np.ones(64, np.float32), imu_valid=np.ones(16, np.float32))
    out = gloves.glove_payload(usb, ctx)
    assert out["pressure"].shape == (16, 16) and out["pressure"][1, 0] == 16
    assert out["imu_quat"].shape == (16, 4) and out["imu_valid"].shape == (16,)
    ble = cls(header=header_message(STORE, T0), pressure=np.zeros(256, np.float32),
              imu_quat=np.zeros(0, np.float32), imu_valid=np.zeros(0, np.float32))
    assert set(gloves.glove_payload(ble, ctx)) == {"pressure"}
    bad = cls(header=header_message(STORE, T0), pressure=np.zeros(256, np.float32),
              imu_quat=np.zeros(60, np.float32), imu_valid=np.zeros(16, np.float32))
    with pytest.raises(PayloadError, match="/glove .*imu_quat needs 64 values"):
        gloves.glove_payload(bad, ctx)
    # a message of another definition (a ROS 1 bag's own) with a short pressure array or a
    # wrong hand pose is a counted drop (PayloadError), not an error that stops the episode
    short = cls(header=header_message(STORE, T0), pressure=np.zeros(250, np.float32),
                imu_quat=np.zeros(0, np.float32), imu_valid=np.zeros(0, np.float32))
    with pytest.raises(PayloadError, match="/glove .*pressure needs 256 values .*has 250"):
        gloves.glove_payload(short, ctx)
    pose = STORE.types[gloves.HAND_POSE](header=header_message(STORE, T0), joints=np.zeros(60, np.float32))
    with pytest.raises(PayloadError, match="HandPose.joints needs 63 values"):
        gloves.hand_pose_payload(pose, ctx)


@requires_public_bags
def test_camera_info_gives_the_spec_calibration_shape():
    with open_bag(BAGS / "aruco_images.bag") as bag:
        info = bag.decode(bag.first("/raspicam_node/camera_info"))
    cal = camera_calibration(info, name="raspicam", fps=30)
    assert cal["resolution"] == [1280, 960] and cal["name"] == "raspicam" and cal["fps"] == 30.0
    assert cal["left_camera"]["intrinsic"] == pytest.approx([1014.343103, 1011.693732, 637.246371, 469.566378])
    assert cal["left_camera"]["distortion"] == pytest.approx([0.157006, -0.286270, -5.60165e-05, 0.00158636, 0.0],
                                                             rel=1e-5)
    assert set(cal) == {"type", "name", "resolution", "fps", "baseline", "left_camera", "right_camera",
                        "depth_scale", "cam_imu_timeshift"}
    ci = STORE.types["sensor_msgs/msg/CameraInfo"]
    roi = STORE.types["sensor_msgs/msg/RegionOfInterest"](x_offset=0, y_offset=0, height=0, width=0, do_rectify=False)
    k = np.array([600.0, 0, 640, 0, 600, 400, 0, 0, 1])
    p = np.array([600.0, 0, 640, -600 * 0.095, 0, 600, 400, 0, 0, 0, 1, 0])
    right = ci(header=header_message(STORE, 0), height=800, width=1280, distortion_model="plumb_bob",
               d=np.zeros(5), k=k, r=np.eye(3).ravel(), p=p, binning_x=0, binning_y=0, roi=roi)
    stereo = camera_calibration(right, name="head", right=right, depth_scale=0.001)
    assert stereo["type"] == "stereo_rgbd_camera" and stereo["baseline"] == pytest.approx(0.095)
    assert stereo["right_camera"]["intrinsic"] == [600.0, 600.0, 640.0, 400.0]


@pytest.mark.parametrize("storage, name", [("ros1", "zeroed.bag"), ("rosbag2/sqlite3", "zeroed")])
def test_a_bag_damaged_in_the_middle_names_the_last_good_message(tmp_path, storage, name):
    cam = spec("c.rgb", StreamKind.VIDEO, "/cam")
    rng = np.random.default_rng(0)
    frames = [Sample(cam.id, T0 + i * 10**8, T0 + i * 10**8, rng.integers(0, 256, (480, 640, 3), dtype=np.uint8))
              for i in range(6)]
    path = write_bag(tmp_path / name, frames, [cam], storage=storage)
    damaged = path if path.is_file() else next(path.glob("*.db3"))
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2: len(data) // 2 + 4000] = bytes(4000)
    damaged.write_bytes(bytes(data))
    with open_bag(path) as bag, pytest.raises(BagError) as err:
        list(iter_samples(bag, plan_topics(bag, [cam])))
    assert f"{path}: reading failed after /cam at bag time 1700000000." in str(err.value)
