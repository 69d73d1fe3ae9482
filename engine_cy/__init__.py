"""Cython core of the engine: every hot path lives here. Imports nothing from the server."""

__version__ = "0.1.0"
