"""Errors of the export a user can fix (what, where, what to do). A ValueError until the
project-wide ``egorec_ros.errors.UserError`` exists; the CLI prints them without traceback."""


class ExportRefused(ValueError):
    """The task cannot be exported as asked; nothing was written."""
