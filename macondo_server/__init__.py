"""Python side of the engine: server, jobs, formats and CLI. The hot paths live in engine_cy."""

__version__ = "0.1.0"
