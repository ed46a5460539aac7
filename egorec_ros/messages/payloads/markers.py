"""Episode markers: ``std_msgs/Bool`` (a recording flag) and ``std_msgs/String``
(start/stop words). Not a stream: they cut a recording into episodes."""
from __future__ import annotations

BOOL = "std_msgs/msg/Bool"
STRING = "std_msgs/msg/String"
MARKER_TYPES = (BOOL, STRING)
