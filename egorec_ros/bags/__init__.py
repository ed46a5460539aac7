"""Bag files: reading (rosbag2 sqlite3/mcap, ROS 1), their message types, and writing
test bags. With ``egorec_ros.messages`` the only code that imports rosbags."""
