"""Build script of macondo-client: generate the macondo.v1 stubs (build_protos.py), then a pure-Python wheel."""

import os
import sys

from setuptools import setup

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_protos  # noqa: E402  (beside this file, not installed)

build_protos.generate()
setup(install_requires=[*build_protos.runtime_requirements(), "grpcio-status>=1.60", "rich>=13"])
