"""Package version, written to info.json ``app_version`` (kept out of __init__.py, see there)."""
__version__ = "0.1.0"
