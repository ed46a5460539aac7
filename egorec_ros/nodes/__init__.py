"""The thin rclpy glue (recorder and driver nodes) lives here; it imports rclpy, so nothing
else in the package may import from it. Recording logic is in ``egorec_ros.recorder``."""
