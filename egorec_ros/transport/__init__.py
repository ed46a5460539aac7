"""How messages reach the recorder and leave publishers: one small interface, two implementations.

Interface (``egorec_ros.transport.base``):

* ``QoS(reliability, depth, durability)`` and ROS's profiles ``DEFAULT`` (reliable,
  keep-last 10, volatile), ``SENSOR_DATA`` (best effort, keep-last 5, volatile),
  ``RECORDER`` (best effort: matches reliable and best-effort publishers alike).
* ``Transport.subscribe(topic, msgtype, qos, callback)``: ``callback(cdr, arrival_ns)``
  gets the serialized message (plain CDR, 4-byte encapsulation header included) and
  the host time it arrived. Decoding is not the transport's job: the recorder decodes
  live messages exactly as it decodes bag messages (``egorec_ros.live.input``).
* ``Transport.publisher(topic, msgtype, qos).publish(cdr)``: send serialized bytes
  (make them with ``egorec_ros.messages.typestores.ros2_typestore().serialize_cdr``).
* ``Transport.serve(service, srvtype, handler)`` / ``Transport.call(service, srvtype, request)``:
  ROS services with serialized ``<srvtype>_Request`` / ``_Response`` bytes (over DDS in
  rmw_cyclonedds_cpp's request/reply format, so ``ros2 service call`` and rclpy clients work).
* ``Transport.topics()``: ROS topic name -> message types seen on the graph.
* ``Transport.close()``.

Topic and type names are ROS names (``/camera/image``, ``sensor_msgs/msg/Image``).

Implementations: ``egorec_ros.transport.dds.DdsTransport`` (cyclonedds-python,
wire-compatible with rmw_cyclonedds_cpp, no ROS needed) and the rclpy one in
``egorec_ros.nodes`` (the only place rclpy is imported).
"""
