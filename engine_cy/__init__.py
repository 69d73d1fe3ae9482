"""Cython core of the engine: every hot path lives here. Imports nothing from the server."""

