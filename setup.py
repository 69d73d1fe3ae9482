"""Build script of macondo-py: cythonize and compile engine_cy/*.pyx (the metadata is in pyproject.toml).

The protobuf/gRPC stubs belong to the macondo-client distribution (clients/python), which this one depends
on; `generate_protos()` below regenerates them in a checkout after proto/ changes (needs grpcio-tools, which
`pip install -e .[dev]` brings).

Build settings (environment):
  MACONDO_CYTHON_DEBUG=1   debug build: bounds, wraparound and initialisation checks on, no optimisation
  MACONDO_MARCH=LEVEL      GCC/Clang -march on x86-64 (default x86-64-v2, i.e. POPCNT/SSE4.2 CPUs of 2009
                           on; "" for none, "native" for this machine only)
Compiler flags are chosen per compiler (MSVC or GCC/Clang) once the compiler is known, not per OS.
"""

import glob
import os
import platform
import shutil
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
DEBUG = os.environ.get("MACONDO_CYTHON_DEBUG", "") not in ("", "0")


def generate_protos() -> None:
    """Regenerate the macondo.v1 stubs (clients/python/macondo_client/pb) from proto/ in a checkout."""
    build_protos = os.path.join(HERE, "clients", "python", "build_protos.py")
    if not os.path.isfile(build_protos):
        return  # an unpacked sdist: the stubs come with the macondo-client dependency
    import importlib.util

    spec = importlib.util.spec_from_file_location("macondo_client_build_protos", build_protos)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.generate()


class BuildPy:
    """Marker only: the contributors' one-line proto regeneration command runs this file up to here."""


def compile_args(compiler_type: str) -> list[str]:
    """Flags for one compiler: MSVC spells them its own way; GCC and Clang share theirs."""
    if compiler_type == "msvc":
        return ["/Od", "/Zi"] if DEBUG else ["/O2"]
    if DEBUG:
        return ["-O0", "-g"]
    flags = ["-O3", "-fno-strict-aliasing"]
    march = os.environ.get("MACONDO_MARCH", "x86-64-v2")
    if march and platform.machine().lower() in ("x86_64", "amd64") and sys.platform != "darwin":
        flags.append(f"-march={march}")
    return flags


class BuildExt(build_ext):
    """Cythonizes only when extensions are really built (an sdist needs no Cython run), then sets the
    compile flags once the compiler is known (MSVC on Windows, GCC/Clang elsewhere or MinGW)."""

    def run(self) -> None:
        # cythonize makes new Extension objects; keep setuptools' own (finalize_options annotated them)
        generated = {ext.name: ext for ext in cythonized(self.extensions)}
        for ext in self.extensions:
            ext.sources = generated[ext.name].sources
            ext.include_dirs = generated[ext.name].include_dirs
        super().run()

    def copy_file(self, infile, outfile, *args, **kwargs):  # type: ignore[override]
        """An in-place build replaces each extension atomically (copy beside it, then rename): a process that
        has the old module loaded keeps its mapping instead of dying with SIGBUS on a truncated file."""
        if self.inplace and str(outfile).endswith((".so", ".pyd")) and os.name != "nt":
            tmp = f"{outfile}.tmp{os.getpid()}"
            shutil.copyfile(infile, tmp)
            shutil.copymode(infile, tmp)
            os.replace(tmp, outfile)
            return outfile, 1
        return super().copy_file(infile, outfile, *args, **kwargs)

    def build_extensions(self) -> None:
        flags = compile_args(self.compiler.compiler_type)
        for ext in self.extensions:
            ext.extra_compile_args = list(flags)
        super().build_extensions()


def extensions() -> list[Extension]:
    """One extension per engine_cy/*.pyx (the sdist carries these sources, never Cython's C output)."""
    exts = []
    for pyx in sorted(glob.glob(os.path.join("engine_cy", "*.pyx"))):
        name = "engine_cy." + os.path.splitext(os.path.basename(pyx))[0]
        exts.append(
            Extension(
                name,
                [pyx],
                include_dirs=["engine_cy"],
                depends=sorted(glob.glob(os.path.join("engine_cy", "*.h"))),
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            )
        )
    return exts


def cythonized(exts: list[Extension]) -> list[Extension]:
    import numpy
    from Cython.Build import cythonize

    for ext in exts:
        if numpy.get_include() not in ext.include_dirs:
            ext.include_dirs.insert(0, numpy.get_include())
    directives = {
        "language_level": "3",
        "boundscheck": DEBUG,
        "wraparound": DEBUG,
        "initializedcheck": DEBUG,
        "cdivision": not DEBUG,
        "embedsignature": True,
    }
    # The generated C depends on the directives: regenerate when switching between debug and release.
    marker = os.path.join(HERE, "build", "cython-mode")
    mode = "debug" if DEBUG else "release"
    previous = open(marker).read().strip() if os.path.exists(marker) else None
    force = previous is not None and previous != mode
    os.makedirs(os.path.dirname(marker), exist_ok=True)
    with open(marker, "w") as fh:
        fh.write(mode)
    return cythonize(exts, compiler_directives=directives, nthreads=0 if os.name == "nt" else 2,
                     annotate=False, force=force)


def _check_client_pin() -> None:
    """The engine needs the stubs of its own release: pyproject's macondo-client pin must be our version."""
    import re

    version = re.search(r'^__version__\s*=\s*"([^"]+)"', open(os.path.join(HERE, "macondo_server", "__init__.py"),
                                                             encoding="utf-8").read(), re.M)
    pin = re.search(r'"macondo-client==([^"]+)"', open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8").read())
    if not version or not pin or pin.group(1) != version.group(1):
        raise SystemExit(f"pyproject.toml must depend on \"macondo-client=={version.group(1) if version else '?'}\" "
                         "(the client distribution of the same version)")


_check_client_pin()
setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt})
