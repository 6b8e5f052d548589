"""A token server following Docker's token authentication specification.

docker-registry (distribution 2.8) checks each bearer token offline: the JWT
header carries the signing certificate in `x5c`, and that certificate must
chain to `auth.token.rootcertbundle`.  We sign with a self-signed certificate
and hand the same certificate to the registry as its whole bundle.
"""
from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import ssl
import threading
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from socket import socket
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from testing.tls import self_signed_ca

ISSUER = "pinguard-test-token-issuer"
PUSH_CREDENTIALS = ("pusher", "push-secret")
READ_CREDENTIALS = ("reader", "read-secret")
PRIVATE_PREFIX = "private/"


@dataclass(frozen=True)
class Grant:
    """One `access` entry of a token."""

    type: str
    name: str
    actions: tuple[str, ...]

    def claim(self) -> dict[str, Any]:
        return {"type": self.type, "name": self.name, "actions": list(self.actions)}


def parse_scope(scope: str) -> tuple[str, str, tuple[str, ...]]:
    """Split `type:name:actions`; the name may itself hold a colon (host:port/repo)."""
    kind, _, rest = scope.partition(":")
    name, _, actions = rest.rpartition(":")
    return kind, name, tuple(a for a in actions.split(",") if a)


def allowed_actions(user: str | None, kind: str, name: str) -> tuple[str, ...]:
    """The access policy the tests rely on."""
    if kind == "registry":
        # `registry:catalog:*` (GET /v2/_catalog) only for known users.
        return ("*",) if user is not None and name == "catalog" else ()
    if kind != "repository":
        return ()
    if user == PUSH_CREDENTIALS[0]:
        return ("pull", "push", "delete")
    if user == READ_CREDENTIALS[0]:
        return ("pull",)
    return () if name.startswith(PRIVATE_PREFIX) else ("pull",)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _signing_identity() -> tuple[rsa.RSAPrivateKey, x509.Certificate]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key, self_signed_ca(key, "pinguard test token signer")


class TokenServer:
    """Threaded HTTP(S) server answering `GET /token` on 127.0.0.1."""

    def __init__(
        self,
        *,
        expires_in: int = 300,
        cert_file: str | None = None,
        key_file: str | None = None,
        issuer: str = ISSUER,
    ) -> None:
        self.expires_in = expires_in
        self.issuer = issuer
        self._key, self._cert = _signing_identity()
        self._lock = threading.Lock()
        self.token_requests = 0
        self.scopes_seen: list[tuple[str, str | None]] = []
        self.authorizations: list[str] = []
        context = None
        if cert_file:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert_file, key_file)
        self._httpd = _Server(("127.0.0.1", 0), _Handler, self, context)
        scheme = "https" if context else "http"
        self.url = f"{scheme}://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread: threading.Thread | None = None

    @property
    def realm(self) -> str:
        return f"{self.url}/token"

    @property
    def signing_cert_pem(self) -> bytes:
        return self._cert.public_bytes(serialization.Encoding.PEM)

    def write_root_bundle(self, path: Path) -> Path:
        """Write what `auth.token.rootcertbundle` must contain to trust our tokens."""
        path.write_bytes(self.signing_cert_pem)
        return path

    def start(self) -> TokenServer:
        # A short poll interval keeps stop(), and so every test teardown, fast.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> TokenServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def issue(self, service: str, scopes: Iterable[str], user: str | None) -> dict[str, Any]:
        """Build the JSON body for one token request."""
        grants = []
        for scope in scopes:
            kind, name, requested = parse_scope(scope)
            allowed = allowed_actions(user, kind, name)
            granted = allowed if "*" in requested else tuple(a for a in requested if a in allowed)
            if granted:
                grants.append(Grant(kind, name, granted))
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": user or "",
            "aud": service,
            "exp": now + self.expires_in,
            "nbf": now,
            "iat": now,
            "jti": uuid.uuid4().hex,
            "access": [grant.claim() for grant in grants],
        }
        token = self.sign(claims)
        issued_at = dt.datetime.fromtimestamp(now, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {
            "token": token,
            "access_token": token,
            "expires_in": self.expires_in,
            "issued_at": issued_at,
        }

    def sign(self, claims: Mapping[str, Any]) -> str:
        """An RS256 JWT whose x5c header lets the registry find and trust our key."""
        der = self._cert.public_bytes(serialization.Encoding.DER)
        header = {"typ": "JWT", "alg": "RS256", "x5c": [base64.b64encode(der).decode()]}
        signing_input = (
            _b64url(json.dumps(header, separators=(",", ":")).encode())
            + "."
            + _b64url(json.dumps(claims, separators=(",", ":")).encode())
        )
        signature = self._key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{signing_input}.{_b64url(signature)}"

    def record(self, authorization: str | None, scopes: list[str], user: str | None) -> None:
        with self._lock:
            self.token_requests += 1
            if authorization is not None:
                self.authorizations.append(authorization)
            self.scopes_seen.extend((scope, user) for scope in scopes or [""])


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default 5 drops connects from a concurrent client; SYN retries cost 1 s
    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        owner: TokenServer,
        context: ssl.SSLContext | None,
    ) -> None:
        super().__init__(address, handler)
        self.owner = owner
        self.context = context

    def finish_request(self, request: Any, client_address: Any) -> None:
        # Handshake in the per-request thread so one slow client cannot stall accept().
        if self.context is None:
            super().finish_request(request, client_address)
            return
        try:
            wrapped: socket = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        with wrapped:
            super().finish_request(wrapped, client_address)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet; tests read the counters instead."""

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path != "/token":
            self._reply(404, {"errors": [{"code": "NOT_FOUND"}]})
            return
        query = parse_qs(url.query)
        scopes = [s for value in query.get("scope", []) for s in value.split(" ") if s]
        authorization = self.headers.get("Authorization")
        accepted, user = _authenticate(authorization)
        owner = self.server.owner
        owner.record(authorization, scopes, user)
        if not accepted:
            self.send_response(401)
            self.send_header("Www-Authenticate", 'Basic realm="pinguard test token server"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        service = query.get("service", [""])[0]
        self._reply(200, owner.issue(service, scopes, user))

    def _reply(self, status: int, body: Mapping[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


_USERS = dict([PUSH_CREDENTIALS, READ_CREDENTIALS])


def _authenticate(authorization: str | None) -> tuple[bool, str | None]:
    """(credentials acceptable, user); no header at all means anonymous, which is acceptable."""
    if authorization is None:
        return True, None
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() != "basic":
        return False, None
    try:
        user, _, password = base64.b64decode(value, validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return False, None
    if _USERS.get(user) != password:
        return False, None
    return True, user
