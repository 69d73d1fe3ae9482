"""Compatibility package: see macondo_server/pb/__init__.py."""
