"""Recording without ROS: rig + samples -> assembler -> episode writer.

``Recorder`` runs live (samples pushed from any thread, rows built on its tick
thread); ``record_samples`` replays a finished sample stream (bags, tests) through the
same assembler in replay mode.
"""
