"""Helpers shared by the tests; test files import from here, never from each other."""
