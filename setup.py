"""Build script: cythonize engine_cy/*.pyx and generate protobuf/gRPC code from proto/.

Set MACONDO_CYTHON_DEBUG=1 for a debug build (bounds checks, wraparound and
initialized checks back on, -O0 -g).
"""
import glob
import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
DEBUG = os.environ.get("MACONDO_CYTHON_DEBUG", "") not in ("", "0")


def generate_protos() -> None:
    """Run grpc_tools.protoc over proto/ into macondo_server/pb/ (never hand-edited)."""
    import grpc_tools
    from grpc_tools import protoc

    proto_root = os.path.join(HERE, "proto")
    out_dir = os.path.join(HERE, "macondo_server", "pb")
    os.makedirs(out_dir, exist_ok=True)
    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    files = sorted(glob.glob(os.path.join(proto_root, "macondo", "v1", "*.proto")))
    for f in files:
        args = [
            "protoc",
            f"-I{proto_root}",
            f"-I{include}",
            f"--python_out={out_dir}",
            f"--pyi_out={out_dir}",
            f"--grpc_python_out={out_dir}",
            f,
        ]
        if protoc.main(args) != 0:
            raise SystemExit(f"protoc failed on {f}")
    # protoc writes macondo/v1/x_pb2.py under out_dir; make the imports package-relative.
    gen_dir = os.path.join(out_dir, "macondo", "v1")
    for name in os.listdir(gen_dir):
        path = os.path.join(gen_dir, name)
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        text = text.replace("from macondo.v1 import", "from macondo_server.pb.macondo.v1 import")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    for pkg in (os.path.join(out_dir, "macondo"), gen_dir):
        init = os.path.join(pkg, "__init__.py")
        if not os.path.exists(init):
            open(init, "w").close()


class BuildPy(build_py):
    def run(self) -> None:
        generate_protos()
        super().run()


class BuildExt(build_ext):
    def run(self) -> None:
        generate_protos()
        super().run()


def extensions():
    import numpy
    from Cython.Build import cythonize

    directives = {
        "language_level": "3",
        "boundscheck": DEBUG,
        "wraparound": DEBUG,
        "initializedcheck": DEBUG,
        "cdivision": not DEBUG,
        "embedsignature": True,
    }
    cflags = ["-O0", "-g"] if DEBUG else ["-O3", "-march=x86-64-v2", "-fno-strict-aliasing"]
    if sys.platform == "darwin" or os.uname().machine not in ("x86_64", "AMD64"):
        cflags = [f for f in cflags if not f.startswith("-march")]
    exts = []
    for pyx in sorted(glob.glob(os.path.join("engine_cy", "*.pyx"))):
        name = "engine_cy." + os.path.splitext(os.path.basename(pyx))[0]
        exts.append(
            Extension(
                name,
                [pyx],
                include_dirs=[numpy.get_include(), "engine_cy"],
                extra_compile_args=cflags,
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            )
        )
    # The generated C depends on the directives: regenerate when switching between debug and release.
    marker = os.path.join(HERE, "build", "cython-mode")
    mode = "debug" if DEBUG else "release"
    previous = open(marker).read().strip() if os.path.exists(marker) else None
    force = previous is not None and previous != mode
    os.makedirs(os.path.dirname(marker), exist_ok=True)
    with open(marker, "w") as fh:
        fh.write(mode)
    return cythonize(exts, compiler_directives=directives, nthreads=2, annotate=False, force=force)


generate_protos()  # package discovery needs the generated pb packages to exist
setup(ext_modules=extensions(), cmdclass={"build_py": BuildPy, "build_ext": BuildExt})
