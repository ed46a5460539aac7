"""Runtime registration of our custom messages (msg/*.msg) for rosbags.

The converter and the test-bag writer read and write bags without a ROS
install, so the ``egorec_ros/msg/*`` types are registered into rosbags
typestores from the same .msg files that colcon builds.
"""
