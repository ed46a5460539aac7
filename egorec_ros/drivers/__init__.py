"""ROS-free device driver cores: device bytes -> ROS messages (rosbags objects of
``egorec_ros.messages.typestores.ros2_typestore()``) stamped with the host clock at
capture, handed to ``publish(topic, msg)``. The thin rclpy nodes (``egorec_ros/nodes``)
give them a transport; tests and benchmarks give them a list."""
