"""Message -> Sample payload, one module per message family.

Each module has the reading direction (``*_payload``: a deserialized rosbags
message -> the payload of ``egorec_ros.assembly.sample.Sample``) and the writing
direction (``*_message``: payload -> message, used to write test bags). The two
live together so a family's field layout is described in one place.
"""
