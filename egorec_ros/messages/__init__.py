"""ROS message types and their decoding, shared by bags and live topics.

Our .msg files registered into rosbags typestores, the rules that turn a message
type into a stream's payload (``mapping``), the payload functions per message family
(``payloads``), header stamps and CameraInfo -> calibration. Read side only: bag
files are ``egorec_ros.bags``.
"""
