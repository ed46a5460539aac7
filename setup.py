"""pip install path (any machine, no ROS). In a ROS 2 workspace colcon uses CMakeLists.txt.

Built-in rigs and our .msg files stay at the top level (``config/rigs``, ``msg/``: the ROS
package layout) and are copied into the package as ``egorec_ros/data/{rigs,msg}`` when a
wheel is built, so a pip install finds them with importlib.resources (see
egorec_ros/resources.py; an editable install reads the top-level folders directly).
"""
import re
import shutil
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
DATA = {"rigs": ("config/rigs", "*.yaml"), "msg": ("msg", "*.msg"), "srv": ("srv", "*.srv"),
        "config": ("config", "*.xml")}


class build_py_with_data(build_py):
    """build_py, plus copies (not symlinks) of config/rigs and msg as package data."""

    def run(self) -> None:
        super().run()
        for kind, (folder, pattern) in DATA.items():
            target = Path(self.build_lib) / "egorec_ros" / "data" / kind
            target.mkdir(parents=True, exist_ok=True)
            for f in sorted((HERE / folder).glob(pattern)):
                shutil.copyfile(f, target / f.name)


def version() -> str:
    """The one version, from egorec_ros/version.py (package.xml must match it)."""
    return re.search(r'__version__ = "([^"]+)"', (HERE / "egorec_ros" / "version.py").read_text()).group(1)


setup(
    name="egorec_ros",
    version=version(),
    description="Multi-device robot-learning recorder and bag converter for the pooled_episodes_v1 layout",
    python_requires=">=3.10",
    packages=find_packages(include=["egorec_ros", "egorec_ros.*"]),
    package_data={"egorec_ros": ["py.typed"], "egorec_ros.console": ["static/*"]},
    cmdclass={"build_py": build_py_with_data},
    install_requires=[
        "numpy>=1.24",
        "pyarrow>=14",
        # PyAV wheels bundle FFmpeg (libx264, libx265, libsvtav1, ffv1). The newest
        # release differs per Python (3.10: 17.x, 3.11: 18.x, 3.12: 19.x); the depth
        # round-trip test guards the codec behaviour we rely on.
        "av>=17,<20",
        "rosbags>=0.10.4,<0.12",
        # mcap chunks decompressed with the GIL released (egorec_ros/bags/zstd_chunks.py)
        "zstandard>=0.22,<1",
        "PyYAML>=6",
        "tqdm>=4.60",
        # device drivers (egorec_ros/drivers): serial gloves and the UMI board, BLE gloves
        "pyserial>=3.5,<4",
        "bleak>=0.22,<4",
        # JPEG at IJG quality 95 for the EgoSmith export (FFmpeg mjpeg cannot set it, see export/egosmith/jpeg.py)
        "Pillow>=9",
        # DDS transport (no ROS needed). Pinned: egorec_ros.transport.dds.rawio uses its
        # private C layer (raw CDR write/take); test_transport_dds.py guards the bytes.
        "cyclonedds==11.0.1",
        # egorec upload: streamed multipart POSTs with separate connect/read/write timeouts, verified TLS
        "httpx>=0.27,<0.29",
        # the upload thread's idle I/O class (thread_priority.idle_io_for_thread: ioprio_set per thread)
        "psutil>=5.9,<8",
        # egorec console: an ASGI app (server-sent events, FileResponse with HTTP Range) and its server
        "starlette>=0.37,<1",
        "uvicorn>=0.29,<1",
    ],
    extras_require={
        # pytest-timeout: a hung test fails alone (faulthandler dump) instead of eating the CI budget
        # setuptools + wheel: test_resources builds the package without build isolation (a 3.12 venv has no
        # setuptools of its own); multipart: the upload tests' server (test/helpers/upload_server.py) parses
        # the streamed form with it (PushMultipartParser, since 1.1)
        "test": ["pytest>=7", "pytest-timeout>=2.2", "hypothesis>=6.80", "setuptools>=64", "wheel>=0.40", "webdataset>=0.2.86",
                 "multipart>=1.2,<3",
                 # the console's browser test drives Debian's chromium + chromium-driver (scripts/browser_deps.sh)
                 "selenium>=4.20,<5"],
        # the CI gates (scripts/test.sh): lint, types, import layering
        "dev": ["ruff>=0.6,<0.9", "mypy>=1.10,<2", "import-linter>=2.0,<3", "types-PyYAML", "types-tqdm"],
        "ray": ["ray>=2.9"],
    },
    entry_points={"console_scripts": ["egorec = egorec_ros.cli:main"]},
)
