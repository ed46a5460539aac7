"""ros2 launch egorec_ros record.launch.py rig:=appendix_b [task:=T out:=DIR codec:=h264 sim:=true devices:=…]

Starts the recorder node for a rig; ``sim:=true`` also starts the simulated devices of the
rig, else the drivers node for the rig's devices egorec drives (``devices:=`` or
``drivers_params_file:=`` say where those not found by their keys are); a rig with a RealSense
(d435/d405) includes realsense2_camera's rs_launch.py with the settings the rig needs (its topic
names, sizes at the rig's fps, aligned depth when the rig records the aligned topic, unified IMU). Episodes: ``ros2 service call
/egorec_recorder/start egorec_ros/srv/Start "{task: '', instruction: 'pick the cup'}"`` and
``/egorec_recorder/stop egorec_ros/srv/Stop``; status: ``ros2 topic echo /egorec_recorder/status``.
"""
import json
import os
import shutil
import subprocess

from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, LogInfo, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch_ros.actions import Node

ARGS = {
    "rig": ("appendix_b", "built-in rig name or rig file"),
    "task": ("", "task folder under out (default: the rig name)"),
    "out": (os.path.expanduser("~/egorec_data"), "dataset root"),
    "codec": ("h264", "RGB video codec: h264, hevc or av1"),
    "size": ("", "WxH: record every video stream at this size (with sim:=true and no size: the largest of "
                 "640x480, 480x360, 320x240 this machine simulates and encodes in real time, as `egorec demo`)"),
    "sim": ("false", "true: start simulated devices for the rig"),
    "marker": ("", "marker topic (std_msgs/String start/stop) that starts and stops episodes"),
    "params_file": ("", "a parameters YAML for the recorder (see share/egorec_ros/config/recorder.yaml)"),
    "devices": ("", "where the rig's devices are, when not found by their keys: ID[.STREAM]=WHERE entries "
                    "separated by ';' (e.g. 'cam=ipc:/run/cam.sock;ego.slam=/opt/slam/run --live')"),
    "drivers_params_file": ("", "a parameters YAML for the drivers node (see share/egorec_ros/config/drivers.yaml)"),
}


def _realsense_args(rig):
    """{device id: rs_launch.py arguments} of the rig's RealSense cameras. Computed by the
    ``python3`` the nodes run on (the venv holding pyarrow & co.): ``ros2 launch`` runs on
    the ROS Python, which need not see the PyPI dependencies of egorec_ros."""
    python = shutil.which("python3") or "python3"
    out = subprocess.run([python, "-m", "egorec_ros.drivers.realsense", rig], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"rig {rig}: {out.stderr.strip() or out.stdout.strip()} (is the egorec venv active? "
                           "see README 'With ROS 2')")
    return json.loads(out.stdout)


def _sim_size(rig, codec):
    """The size simulated devices of ``rig`` are recorded at when ``size:=`` is not given (see
    egorec_ros.cli.sim_size), and why larger ones were stepped down from; on the venv's python."""
    python = shutil.which("python3") or "python3"
    out = subprocess.run([python, "-m", "egorec_ros.cli.sim_size", rig, "--codec", codec],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"rig {rig}: {out.stderr.strip() or out.stdout.strip()} (is the egorec venv active? "
                           "see README 'With ROS 2')")
    return out.stdout.strip(), [line for line in out.stderr.splitlines() if line.strip()]


def _nodes(context):
    value = {name: context.launch_configurations[name] for name in ARGS}
    sim = value["sim"].lower() in ("true", "1", "yes")
    said = []
    if sim and not value["size"].strip():
        value["size"], why = _sim_size(value["rig"], value["codec"])
        said = [LogInfo(msg=line) for line in why] + [LogInfo(msg=f"simulated devices at {value['size']} "
                                                                  "(size:=WxH chooses another)")]
    params = [{"rig": value["rig"], "task": value["task"], "out": value["out"], "codec": value["codec"],
               "size": value["size"], "marker": value["marker"]}]
    if value["params_file"]:
        params.insert(0, value["params_file"])
    # Ctrl-C commits the running episode, which takes a while for a big rig on a busy PC: SIGTERM
    # (after sigterm_timeout) only asks the same, SIGKILL (after sigkill_timeout more) would lose it.
    actions = said + [Node(package="egorec_ros", executable="recorder", name="egorec_recorder", output="screen",
                           parameters=params, sigterm_timeout="30", sigkill_timeout="120")]
    if sim:
        actions.append(Node(package="egorec_ros", executable="sim_devices", name="egorec_sim_devices",
                            output="screen", parameters=[{"rig": value["rig"], "size": value["size"]}]))
        return actions
    # the drivers of the rig's devices egorec drives (gloves, UMI board, SLAM, S80, camera IPC, UVC);
    # it reports on /diagnostics the devices it cannot find, and exits when the rig has none of them
    drivers = [{"rig": value["rig"]}]
    if value["devices"].strip():                 # else the params file's (or the node's default: none)
        drivers[0]["devices"] = [d.strip() for d in value["devices"].split(";") if d.strip()]
    if value["drivers_params_file"]:
        drivers.insert(0, value["drivers_params_file"])
    actions.append(Node(package="egorec_ros", executable="drivers", name="egorec_drivers", output="screen",
                        parameters=drivers))
    for device, args in _realsense_args(value["rig"]).items():
        try:
            share = get_package_share_directory("realsense2_camera")
        except PackageNotFoundError:
            actions.append(LogInfo(msg=f"rig {value['rig']} has RealSense {device} but realsense2_camera is not "
                                       "installed (apt install ros-$ROS_DISTRO-realsense2-camera); start it yourself"))
            continue
        actions.append(IncludeLaunchDescription(
            PythonLaunchDescriptionSource(os.path.join(share, "launch", "rs_launch.py")),
            launch_arguments=args.items()))
    return actions


def generate_launch_description():
    return LaunchDescription([DeclareLaunchArgument(name, default_value=default, description=text)
                              for name, (default, text) in ARGS.items()] + [OpaqueFunction(function=_nodes)])
