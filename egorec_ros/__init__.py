"""egorec_ros: multi-device robot-learning recorder for the pooled_episodes_v1 layout.

Keep this file free of imports: in a ROS 2 install the rosidl-generated
``egorec_ros/__init__.py`` replaces it (see CMakeLists.txt).
"""
