#!/usr/bin/env python3
"""Build the web board (into macondo_server/data/web, served by `macondo serve --web`) and the TypeScript client
it uses (clients/ts), reproducibly from the committed lock files:

    clients/ts:          npm ci; npm run build      (buf generate from proto/ into src/gen, then tsc into dist/)
    web:                 npm ci; npm run build      (tsc --noEmit, then vite build into macondo_server/data/web,
                                                     the package data the server serves)

`npm ci` installs exactly what package-lock.json records and never rewrites it, so a fresh checkout stays clean.
The locks are complete: they list every platform's optional binary package (esbuild, rollup, buf), so `npm ci`
accepts them on any OS. A project is installed only when its node_modules is missing or its package.json or
package-lock.json changed since the last install (a stamp inside node_modules). After changing dependencies in
a package.json, refresh its lock with `npm install --package-lock-only` (npm >= 9) and commit both.

The build is skipped when nothing it depends on changed since the last build (a stamp beside the build), or
with a note when node/npm are not installed (the gRPC and Connect ports work without it; only --web needs it).
`python3 dev.py start|test` runs it; `python3 web/build.py --force` reinstalls and rebuilds.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

WEB = Path(__file__).resolve().parent
ROOT = WEB.parent
TS = ROOT / "clients" / "ts"
DIST = ROOT / "macondo_server" / "data" / "web"
STAMP = DIST / ".build-stamp"
INPUTS = [(ROOT / "proto", "**/*.proto"), (TS, "package.json"), (TS, "package-lock.json"), (TS, "buf.gen.yaml"),
          (TS, "proto/**/*.proto"), (TS, "src/*.ts"), (TS, "tsconfig.json"), (WEB, "package.json"),
          (WEB, "package-lock.json"), (WEB, "index.html"), (WEB, "vite.config.ts"), (WEB, "tsconfig.json"),
          (WEB, "src/*")]
INSTALL_STAMP = "node_modules/.macondo-install-stamp"   # inside node_modules: gone with it, and npm ci clears it


def stamp() -> str:
    h = hashlib.sha256()
    for base, pattern in INPUTS:
        for path in sorted(base.glob(pattern)):
            if path.is_file():
                h.update(str(path.relative_to(ROOT)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()


def install_stamp(project: Path) -> str:
    """What the project's install depends on: its manifest and lock."""
    h = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        h.update(name.encode())
        h.update((project / name).read_bytes())
    return h.hexdigest()


def install(project: Path, force: bool = False) -> None:
    """`npm ci` (exactly the committed lock, which it never rewrites) unless node_modules is current."""
    digest, stamp_file = install_stamp(project), project / INSTALL_STAMP
    if not force and stamp_file.is_file() and stamp_file.read_text().strip() == digest:
        return
    _npm(["ci", "--no-audit", "--no-fund", "--loglevel=error"], project)
    stamp_file.write_text(digest)


def _npm(args: list[str], cwd: Path) -> None:
    print("+ (cd", cwd.relative_to(ROOT), "&&", "npm", " ".join(args) + ")", flush=True)
    subprocess.run(["npm", *args], cwd=cwd, check=True)


def build(force: bool = False) -> str | None:
    """Build if needed; None when the build is there, else why it cannot be made here."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "node/npm are not installed: the web board is not built (macondo serve --web needs it)"
    digest = stamp()
    built = (DIST / "index.html").is_file() and (TS / "dist" / "node.js").is_file()
    if not force and built and STAMP.is_file() and STAMP.read_text().strip() == digest:
        return None
    for project in (TS, WEB):
        install(project, force=force)
        _npm(["run", "build", "--silent"], project)
    STAMP.write_text(digest)
    return None


def main(argv: list[str]) -> int:
    try:
        reason = build(force="--force" in argv)
    except subprocess.CalledProcessError as exc:
        print(f"web build failed: {' '.join(map(str, exc.cmd))} exited with {exc.returncode}", file=sys.stderr)
        if exc.cmd[:2] == ["npm", "ci"]:
            print("(npm ci installs only from a package-lock.json in sync with package.json: after editing a "
                  "package.json, run `npm install --package-lock-only` there and commit the lock)", file=sys.stderr)
        return 1
    if reason:
        print(f"+ {reason}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
