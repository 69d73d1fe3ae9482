"""Who may call the server, and over what: named bearer tokens, the principal a request counts against, the
limit on failed authentications per address, TLS, and what a server exposes (said at start-up and by
`macondo serve --print-limits`).

Tokens: each has a name (its principal: its quotas and its games) and a secret. They come from a file
(`--token-file`, one `NAME TOKEN` per line, `#` comments), the environment (`MACONDO_TOKENS`, entries
`NAME:TOKEN` separated by commas or whitespace), or the older single HTTP token (`--http-token`,
`MACONDO_HTTP_TOKEN`, named `http`). With any token configured, both ports require one on every request:
`authorization: Bearer TOKEN` (gRPC metadata or HTTP header). Without tokens a request's principal is the
address it comes from ("peer:127.0.0.1"), which is how a server used on loopback counts its clients.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import re
import ssl
import stat
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger("macondo.server")

TOKENS_ENV = "MACONDO_TOKENS"
TOKEN_FILE_ENV = "MACONDO_TOKEN_FILE"
LEGACY_TOKEN_ENV = "MACONDO_HTTP_TOKEN"
LEGACY_TOKEN_NAME = "http"
SHORT_TOKEN_CHARS = 16            # a shorter token is accepted with a warning
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")
_TOKEN = re.compile(r"[\x21-\x7e]{1,512}")      # printable ASCII without spaces, as an HTTP header carries it
FAILURE_WINDOW_SECONDS = 60.0
MAX_TRACKED_ADDRESSES = 100_000


class AuthConfigError(ValueError):
    """A token file, a token or a TLS file cannot be used; the message names it."""


# ---------------------------------------------------------------------------------------------- principals

def peer_address(peer: str) -> str:
    """The address of a peer as gRPC ("ipv4:127.0.0.1:5000", "ipv6:[::1]:5000", "unix:/path") or an ASGI
    server ("127.0.0.1") names it, without the port: "127.0.0.1", "::1", "unix"."""
    peer = peer.strip()
    if peer.startswith("http:"):
        peer = peer[5:]
    kind, sep, rest = peer.partition(":")
    if sep and kind == "ipv4":
        return rest.rpartition(":")[0] or rest          # gRPC's form: the address, then the port
    if sep and kind == "ipv6":
        peer = rest
    elif sep and kind in ("unix", "unix-abstract"):
        return "unix"
    if peer.startswith("["):
        return peer[1:].partition("]")[0].lower()
    try:
        return str(ipaddress.ip_address(peer))
    except ValueError:
        pass
    host, sep, port = peer.rpartition(":")
    if sep and port.isdigit():
        return host
    return peer


def anonymous_principal(peer: str) -> str:
    """The principal of a request without a token: the address it comes from."""
    return f"peer:{peer_address(peer) or 'unknown'}"


def bearer(value: str) -> str | None:
    """The token of an `authorization` value "Bearer TOKEN" (the scheme in any case), else None."""
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None


# ---------------------------------------------------------------------------------------------- tokens

@dataclass
class Tokens:
    """Named bearer tokens; `authenticate` compares in constant time against every one."""

    by_name: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.by_name)

    def __len__(self) -> int:
        return len(self.by_name)

    @property
    def names(self) -> list[str]:
        return sorted(self.by_name)

    def add(self, name: str, token: str, where: str = "") -> None:
        at = f" ({where})" if where else ""
        if not _NAME.fullmatch(name):
            raise AuthConfigError(f"token name {name[:40]!r}{at}: a letter, then letters, digits, '_', '.' or '-' "
                                  "(at most 64)")
        if not _TOKEN.fullmatch(token):
            raise AuthConfigError(f"token {name!r}{at}: 1 to 512 printable ASCII characters without spaces")
        if name in self.by_name:
            raise AuthConfigError(f"token name {name!r}{at} is given twice")
        if any(hmac.compare_digest(token.encode(), t.encode()) for t in self.by_name.values()):
            raise AuthConfigError(f"token {name!r}{at} is the same as another token: each name needs its own")
        if len(token) < SHORT_TOKEN_CHARS:
            log.warning("token %s is shorter than %d characters: easy to guess (openssl rand -hex 16 makes one)",
                        name, SHORT_TOKEN_CHARS)
        self.by_name[name] = token

    def authenticate(self, token: str | None) -> str | None:
        """The name of the token presented, or None. Every token is compared, so the time taken does not say
        which one came close."""
        if token is None:
            return None
        given = token.encode()
        found = None
        for name, secret in self.by_name.items():
            if hmac.compare_digest(given, secret.encode()):
                found = name
        return found

    # ---- sources
    def read_text(self, text: str, where: str) -> None:
        """Lines `NAME TOKEN` (or `NAME:TOKEN`); blank lines and `#` comments are skipped."""
        for number, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, token = _split_entry(line)
            if not token:
                raise AuthConfigError(f"{where} line {number}: expected NAME TOKEN")
            self.add(name, token, f"{where} line {number}")

    def read_file(self, path: str | Path) -> None:
        path = Path(path)
        try:
            info = path.stat()
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeError) as exc:
            raise AuthConfigError(f"cannot read the token file {path}: {exc}") from None
        if os.name == "posix" and info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            log.warning("the token file %s can be read by other users (chmod 600 %s)", path, path)
        self.read_text(text, str(path))

    def read_env_list(self, value: str, where: str = TOKENS_ENV) -> None:
        """`NAME:TOKEN` entries separated by commas or whitespace."""
        for number, item in enumerate((i for i in re.split(r"[\s,]+", value.strip()) if i), 1):
            name, sep, token = item.partition(":")
            if not sep or not token:       # (the entry is not quoted: it may be a token)
                raise AuthConfigError(f"{where}: entry {number} is not NAME:TOKEN")
            self.add(name, token, f"{where} entry {number}")

    @classmethod
    def load(cls, token_file: str | None = None, legacy_token: str | None = None,
             environ: Mapping[str, str] | None = None) -> Tokens:
        """The tokens of `macondo serve`: --token-file (else MACONDO_TOKEN_FILE), MACONDO_TOKENS, and the
        single HTTP token of --http-token (else MACONDO_HTTP_TOKEN), named `http`."""
        env = os.environ if environ is None else environ
        tokens = cls()
        path = token_file or env.get(TOKEN_FILE_ENV, "")
        if path:
            tokens.read_file(path)
        if env.get(TOKENS_ENV, "").strip():
            tokens.read_env_list(env[TOKENS_ENV])
        legacy = legacy_token or env.get(LEGACY_TOKEN_ENV, "")
        if legacy:
            tokens.add(LEGACY_TOKEN_NAME, legacy, "--http-token" if legacy_token else LEGACY_TOKEN_ENV)
        return tokens


def _split_entry(line: str) -> tuple[str, str]:
    parts = line.split(None, 1)
    if len(parts) == 2:
        return parts[0], parts[1].strip()
    name, _, token = line.partition(":")
    return name, token


# ---------------------------------------------------------------------------------------------- failures

class FailureLimiter:
    """Failed authentications per address: after `limit` within a minute, every request from that address is
    refused until the oldest of them is a minute old (whatever token it carries, so that guessing stops
    paying)."""

    def __init__(self, limit: int, window: float = FAILURE_WINDOW_SECONDS) -> None:
        self.limit = limit
        self.window = window
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def blocked(self, address: str, now: float | None = None) -> float:
        """Seconds until `address` may try again (0: it may)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            times = self._failures.get(address)
            if not times:
                return 0.0
            while times and times[0] <= now - self.window:
                times.popleft()
            if not times:
                del self._failures[address]
                return 0.0
            if len(times) < self.limit:
                return 0.0
            return max(0.0, times[0] + self.window - now)

    def failed(self, address: str, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        with self._lock:
            if address not in self._failures and len(self._failures) >= MAX_TRACKED_ADDRESSES:
                self._forget_old(now)
            times = self._failures.setdefault(address, deque(maxlen=self.limit))
            times.append(now)

    def _forget_old(self, now: float) -> None:
        for address in [a for a, t in self._failures.items() if not t or t[-1] <= now - self.window]:
            del self._failures[address]
        while len(self._failures) >= MAX_TRACKED_ADDRESSES:      # still full: the oldest entries go
            del self._failures[next(iter(self._failures))]


# ---------------------------------------------------------------------------------------------- TLS

@dataclass(frozen=True)
class TlsFiles:
    """A certificate chain and its key (PEM) for both ports; with `client_ca`, clients must present a
    certificate signed by it."""

    cert: Path
    key: Path
    client_ca: Path | None = None

    def read(self) -> tuple[bytes, bytes, bytes | None]:
        out: list[bytes | None] = []
        for what, path in (("certificate", self.cert), ("key", self.key), ("client CA", self.client_ca)):
            if path is None:
                out.append(None)
                continue
            try:
                out.append(Path(path).read_bytes())
            except OSError as exc:
                raise AuthConfigError(f"cannot read the TLS {what} {path}: {exc.strerror}") from None
        cert, key, ca = out
        assert cert is not None and key is not None
        return cert, key, ca

    def server_context(self) -> ssl.SSLContext:
        """The HTTP port's TLS context (TLS 1.2 or later), checked now so that a bad file fails the start."""
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            ctx.load_cert_chain(str(self.cert), str(self.key))
            if self.client_ca is not None:
                ctx.load_verify_locations(cafile=str(self.client_ca))
                ctx.verify_mode = ssl.CERT_REQUIRED
        except (OSError, ssl.SSLError) as exc:
            raise AuthConfigError(f"TLS: the certificate {self.cert}, key {self.key}"
                                  f"{f' or client CA {self.client_ca}' if self.client_ca else ''} cannot be used: "
                                  f"{exc}") from None
        ctx.set_alpn_protocols(["http/1.1"])
        return ctx


# ---------------------------------------------------------------------------------------------- the policy

@dataclass
class Security:
    """Who may call a server and how: its tokens, TLS, whether it may serve off loopback without tokens
    (`allow_open`, `macondo serve --allow-open`) and the failed-authentication limiter both ports share."""

    tokens: Tokens = field(default_factory=Tokens)
    tls: TlsFiles | None = None
    allow_open: bool = False
    limiter: FailureLimiter = field(default_factory=lambda: FailureLimiter(10))

    def principal(self, token_name: str | None, peer: str) -> str:
        return token_name if token_name else anonymous_principal(peer)


def is_loopback(host: str) -> bool:
    host = host.strip("[]")
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    return host.strip("[]") in ("", "0.0.0.0", "::")


def describe_bind(host: str) -> str:
    """How far an address reaches, in words."""
    if is_wildcard(host):
        return "every interface: reachable from other machines"
    if is_loopback(host):
        return "loopback: this machine only"
    return "a network interface: reachable from other machines"


def exposure_lines(port_lines: Iterable[tuple[str, str, int]], security: Security) -> list[str]:
    """What a server exposes, one line per port ((name, host, port)), then authentication."""
    tls = security.tls
    tls_text = ("TLS" + (", client certificates required" if tls.client_ca else "")) if tls else "no TLS (plain text)"
    lines = []
    for name, host, port in port_lines:
        lines.append(f"{name} on {host}:{port} ({describe_bind(host)}); {tls_text}")
    if security.tokens:
        lines.append(f"bearer tokens required on every request: {len(security.tokens)} "
                     f"({', '.join(security.tokens.names)})")
    elif security.allow_open:
        lines.append("no authentication: anyone who reaches the ports may use the server (--allow-open)")
    else:
        lines.append("no authentication (loopback only): every local user may use the server")
    return lines
