"""Exporters: pooled_episodes_v1 task directories -> formats that training code reads.
One package per format (``egosmith``, ``lerobot``), each with a ``cli`` module that
``egorec export <format>`` dispatches to."""
