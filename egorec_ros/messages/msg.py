"""The type of a deserialized ROS message.

rosbags builds a dataclass per message type at run time, with the fields of its .msg
definition, so there is no static type to name: payload functions take ``Msg`` (Any) and
read the fields their type has (the mapping rules only hand them messages of that type).
"""
from __future__ import annotations

from typing import Any

Msg = Any
