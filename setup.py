"""pip install path (any machine, no ROS). In a ROS 2 workspace colcon uses CMakeLists.txt."""
import glob

from setuptools import find_packages, setup

setup(
    name="egorec_ros",
    version="0.1.0",
    description="Multi-device robot-learning recorder and bag converter for the pooled_episodes_v1 layout",
    python_requires=">=3.10",
    packages=find_packages(include=["egorec_ros", "egorec_ros.*"]),
    package_data={"egorec_ros": ["py.typed"]},
    data_files=[("share/egorec_ros/config/rigs", sorted(glob.glob("config/rigs/*.yaml"))),
                ("share/egorec_ros/config", sorted(glob.glob("config/*.xml") + glob.glob("config/*.yaml"))),
                ("share/egorec_ros/launch", sorted(glob.glob("launch/*.py"))),
                ("share/egorec_ros/msg", sorted(glob.glob("msg/*.msg"))),
                ("share/egorec_ros/srv", sorted(glob.glob("srv/*.srv")))],
    install_requires=[
        "numpy>=1.24",
        "pyarrow>=14",
        # PyAV wheels bundle FFmpeg (libx264, libx265, libsvtav1, ffv1). The newest
        # release differs per Python (3.10: 17.x, 3.11: 18.x, 3.12: 19.x); the depth
        # round-trip test guards the codec behaviour we rely on.
        "av>=17,<20",
        "rosbags>=0.10.4,<0.12",
        "PyYAML>=6",
        "tqdm>=4.60",
        # DDS transport (no ROS needed). Pinned: egorec_ros.transport.dds.rawio uses its
        # private C layer (raw CDR write/take); test_transport_dds.py guards the bytes.
        "cyclonedds==11.0.1",
    ],
    extras_require={
        "test": ["pytest>=7", "hypothesis>=6.80"],
        "ray": ["ray>=2.9"],
    },
    entry_points={"console_scripts": ["egorec = egorec_ros.cli:main"]},
)
