"""exporter-toolkit web configuration (``--web-config FILE``): TLS and basic auth, in the same YAML format
Prometheus exporters use (prometheus/exporter-toolkit ``docs/web-configuration.md``)::

    tls_server_config:
      cert_file: server.crt          # PEM; relative paths are relative to this file
      key_file: server.key
      client_auth_type: RequireAndVerifyClientCert   # optional; needs client_ca_file
      client_ca_file: ca.crt
      min_version: TLS12             # TLS10 | TLS11 | TLS12 | TLS13
    http_server_config:
      headers:                       # exporter-toolkit's allowed set: Strict-Transport-Security,
        X-Frame-Options: deny        # X-Content-Type-Options, X-Frame-Options, X-XSS-Protection,
                                     # Content-Security-Policy
    basic_auth_users:
      prometheus: $2y$10$...         # bcrypt hash (htpasswd -nBC 10 "" | tr -d ':\\n')

Unknown keys are errors, so a typo never silently disables authentication.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import re
import ssl
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fabricd.errors import UsageError

_TLS_KEYS = {
    "cert_file",
    "key_file",
    "client_auth_type",
    "client_ca_file",
    "min_version",
    "max_version",
    "cipher_suites",
    "curve_preferences",
    "prefer_server_cipher_suites",
}
_TOP_KEYS = {"tls_server_config", "basic_auth_users", "http_server_config"}
_VERSIONS = {
    "TLS10": ssl.TLSVersion.TLSv1,
    "TLS11": ssl.TLSVersion.TLSv1_1,
    "TLS12": ssl.TLSVersion.TLSv1_2,
    "TLS13": ssl.TLSVersion.TLSv1_3,
}
# exporter-toolkit takes Go's crypto/tls names (tls.CipherSuites()); Python's ssl takes OpenSSL's. TLS 1.3 suites
# are not configurable in Go (always on), so they are accepted and change nothing, as there.
_TLS13_SUITES = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}
_CIPHERS = {
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
}
# Go's curve names -> OpenSSL's. Python's ssl sets one ECDH curve (SSLContext.set_ecdh_curve), so one is taken.
_CURVES = {"CurveP256": "prime256v1", "CurveP384": "secp384r1", "CurveP521": "secp521r1", "X25519": "X25519"}
# http_server_config.headers: the response headers exporter-toolkit lets a web config set, with the values allowed
# where it enumerates them (exporter-toolkit web/handler.go, extraHTTPHeaders); any other header is refused.
_HEADERS: dict[str, tuple[str, ...]] = {
    "Strict-Transport-Security": (),
    "X-Content-Type-Options": ("nosniff",),
    "X-Frame-Options": ("deny", "sameorigin"),
    "X-XSS-Protection": (),
    "Content-Security-Policy": (),
}
_HTTP_KEYS = {"http2", "headers"}
_CLIENT_AUTH = {
    "NoClientCert": ssl.CERT_NONE,
    "RequestClientCert": ssl.CERT_OPTIONAL,
    "RequireAnyClientCert": ssl.CERT_REQUIRED,
    "VerifyClientCertIfGiven": ssl.CERT_OPTIONAL,
    "RequireAndVerifyClientCert": ssl.CERT_REQUIRED,
}


@dataclass
class WebConfig:
    """Parsed web configuration. ``tls`` is None for plain HTTP; ``users`` maps user -> bcrypt hash."""

    path: Path | None = None
    tls: ssl.SSLContext | None = None
    users: dict[str, bytes] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    """``http_server_config.headers``: added to every response."""
    _verified: dict[str, bytes] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _decoy: bytes | None = field(default=None, repr=False)

    def _decoy_hash(self) -> bytes:
        with self._lock:
            if self._decoy is None:
                self._decoy = _decoy_for(self.users)
            return self._decoy

    def authorized(self, header: str | None) -> bool:
        """Check an ``Authorization: Basic ...`` header. True when no users are configured.

        A successful bcrypt check is remembered (as a SHA-256 of the credentials) so that a Prometheus scraping every
        few seconds does not pay bcrypt's deliberate cost on every scrape, as exporter-toolkit does.
        """
        if not self.users:
            return True
        if not header or not header.startswith("Basic "):
            return False
        try:
            user, _, password = base64.b64decode(header[6:], validate=True).decode("utf-8").partition(":")
        except (ValueError, UnicodeDecodeError):
            return False
        hashed = self.users.get(user)
        if hashed is None:
            # an unknown user costs one bcrypt too, against a decoy hash of the highest configured cost, so that
            # response times do not tell which user names exist (exporter-toolkit does the same with a fixed hash)
            self._pay_decoy(password)
            return False
        digest = hashlib.sha256(f"{user}\0{password}".encode()).digest()
        with self._lock:
            known = self._verified.get(user)
        if known is not None and hmac.compare_digest(known, digest):
            return True
        import bcrypt

        try:
            ok = bcrypt.checkpw(password.encode(), hashed)
        except ValueError:
            ok = False
        if ok:
            with self._lock:
                self._verified[user] = digest
        elif _cost(hashed) < self._max_cost():
            # a user whose hash is cheaper than the others would answer a wrong password sooner, which tells that
            # the name exists: pay the decoy of the highest cost as well, so every refusal takes at least that long
            self._pay_decoy(password)
        return ok

    def _max_cost(self) -> int:
        return max((_cost(h) for h in self.users.values()), default=10)

    def _pay_decoy(self, password: str) -> None:
        import bcrypt

        with contextlib.suppress(ValueError):
            bcrypt.checkpw(password.encode(), self._decoy_hash())


def _cost(hashed: bytes) -> int:
    """The cost of a bcrypt hash (``$2y$10$...`` -> 10), checked for form at load (``_is_bcrypt``)."""
    return int(hashed[4:6])


def _decoy_for(users: dict[str, bytes]) -> bytes:
    import bcrypt

    cost = max((_cost(h) for h in users.values()), default=10)
    return bcrypt.hashpw(b"fabricd-decoy", bcrypt.gensalt(cost))


def _fail(path: Path, where: str, what: str, hint: str) -> UsageError:
    return UsageError(f"{path}: {where}: {what}", hint=hint)


def load_web_config(path: str | Path) -> WebConfig:
    """Read and check a web-config file; raise :class:`~fabricd.errors.UsageError` with the key and a fix hint."""
    p = Path(path)
    try:
        data: Any = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise UsageError(
            f"{p}: cannot read the web config: {exc.strerror}", hint="give --web-config an existing YAML file"
        ) from exc
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{p}: the web config is not UTF-8 text ({exc.reason} at byte {exc.start})", hint="save it as UTF-8 YAML"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"{p}:{mark.line + 1}" if mark is not None else str(p)
        what = getattr(exc, "problem", None) or getattr(exc, "context", None) or "invalid YAML"
        raise UsageError(
            f"{where}: not valid YAML: {' '.join(str(what).split())}", hint="fix the YAML syntax"
        ) from None
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # PyYAML on a bad tagged value (!!bool x)
        raise UsageError(f"{p}: not valid YAML: {' '.join(str(exc).split())}", hint="fix the YAML value") from None
    if not isinstance(data, dict):
        raise _fail(
            p,
            "top level",
            f"expected a mapping, got {type(data).__name__}",
            "see exporter-toolkit's web-configuration.md",
        )
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise _fail(p, ", ".join(sorted(unknown)), "unknown key", f"expected one of {', '.join(sorted(_TOP_KEYS))}")
    cfg = WebConfig(path=p)
    users = data.get("basic_auth_users")
    users = {} if users is None else users  # an empty list or string is not "no users": it is refused below
    if not isinstance(users, dict):
        raise _fail(p, "basic_auth_users", "expected a mapping of user: bcrypt-hash", "e.g. prometheus: $2y$10$...")
    for user, hashed in users.items():
        if not isinstance(hashed, str) or not _is_bcrypt(hashed):
            raise _fail(
                p,
                f"basic_auth_users.{user}",
                "expected a bcrypt hash ($2a$/$2b$/$2y$...)",
                "make one with: htpasswd -nBC 10 '' | tr -d ':\\n'",
            )
        cfg.users[str(user)] = hashed.encode()
    cfg.headers = _http_server_config(p, data.get("http_server_config"))
    tls = data.get("tls_server_config")
    if tls is not None and tls != {}:  # absent or {}: plain HTTP, as exporter-toolkit; [] or "" is refused
        cfg.tls = _tls_context(p, tls)
    return cfg


_BCRYPT = re.compile(r"\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}")


def _is_bcrypt(hashed: str) -> bool:
    """A well-formed bcrypt hash, as exporter-toolkit checks with bcrypt.Cost (a malformed one would refuse every
    request, unseen until the first scrape)."""
    return _BCRYPT.fullmatch(hashed) is not None


def _check_section(p: Path, name: str, value: Any, keys: set[str], hint: str) -> None:
    """A section of the file must be a mapping of the keys exporter-toolkit knows there (the first unknown one, in
    sorted order, is named)."""
    if not isinstance(value, dict):
        raise _fail(p, name, "expected a mapping", hint)
    unknown = set(value) - keys
    if unknown:
        raise _fail(
            p, f"{name}.{sorted(map(str, unknown))[0]}", "unknown key", f"expected one of {', '.join(sorted(keys))}"
        )


def _http_server_config(p: Path, http: Any) -> dict[str, str]:
    """``http_server_config``: the response headers exporter-toolkit allows; ``http2`` only as false (this server
    speaks HTTP/1.1). Anything else is refused, never accepted and ignored."""
    if http is None:
        return {}
    _check_section(p, "http_server_config", http, _HTTP_KEYS, "give headers: and/or http2:")
    if "http2" in http and http["http2"] is not False:
        raise _fail(
            p,
            "http_server_config.http2",
            f"{http['http2']!r} is not supported",
            "fabricd's exporter serves HTTP/1.1 only: remove http2 or set it to false",
        )
    headers = http.get("headers") or {}
    if not isinstance(headers, dict):
        raise _fail(
            p, "http_server_config.headers", "expected a mapping of header: value", "e.g. X-Frame-Options: deny"
        )
    out: dict[str, str] = {}
    for name, value in headers.items():
        allowed = _HEADERS.get(str(name))
        if allowed is None:
            raise _fail(
                p,
                f"http_server_config.headers.{name}",
                "this header cannot be configured",
                f"expected one of {', '.join(_HEADERS)}",
            )
        if not isinstance(value, str) or not value or not value.isprintable() or (allowed and value not in allowed):
            expected = f"one of {', '.join(allowed)}" if allowed else "one line of printable text"
            raise _fail(p, f"http_server_config.headers.{name}", f"invalid value {value!r}", f"expected {expected}")
        out[str(name)] = value
    return out


def _tls_context(p: Path, tls: Any) -> ssl.SSLContext:
    _check_section(p, "tls_server_config", tls, _TLS_KEYS, "give cert_file and key_file")
    for key in ("cert_file", "key_file"):
        if not tls.get(key):
            raise _fail(p, f"tls_server_config.{key}", "missing", "give the PEM certificate and key paths")
    base = p.parent

    def rel(value: str) -> str:
        q = Path(value)
        return str(q if q.is_absolute() else base / q)

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = _version(p, tls, "min_version", "TLS12")
    ctx.maximum_version = _version(p, tls, "max_version", "TLS13")
    if ctx.minimum_version > ctx.maximum_version:
        raise _fail(
            p,
            "tls_server_config.max_version",
            f"{tls.get('max_version')} is below min_version {tls.get('min_version', 'TLS12')}",
            "raise max_version or lower min_version",
        )
    _ciphers(p, ctx, tls)
    try:
        ctx.load_cert_chain(rel(tls["cert_file"]), rel(tls["key_file"]))
    except (OSError, ssl.SSLError) as exc:
        raise _fail(
            p,
            "tls_server_config.cert_file/key_file",
            f"cannot load: {exc}",
            "check the paths and that the key matches the certificate",
        ) from exc
    auth = str(tls.get("client_auth_type", "NoClientCert"))
    if auth not in _CLIENT_AUTH:
        raise _fail(
            p,
            "tls_server_config.client_auth_type",
            f"unknown value {auth!r}",
            f"expected one of {', '.join(_CLIENT_AUTH)}",
        )
    ctx.verify_mode = _CLIENT_AUTH[auth]
    if auth == "RequireAnyClientCert":
        ctx.check_hostname = False
    if tls.get("client_ca_file"):
        try:
            ctx.load_verify_locations(rel(tls["client_ca_file"]))
        except (OSError, ssl.SSLError) as exc:
            raise _fail(p, "tls_server_config.client_ca_file", f"cannot load: {exc}", "give a PEM CA bundle") from exc
        if auth == "NoClientCert":
            raise _fail(
                p,
                "tls_server_config.client_ca_file",
                "given without a client_auth_type, so no client certificate would be asked for",
                "set client_auth_type: RequireAndVerifyClientCert (or remove client_ca_file)",
            )
    elif ctx.verify_mode != ssl.CERT_NONE:
        raise _fail(p, "tls_server_config.client_ca_file", "missing", f"{auth} needs a client CA file")
    return ctx


def _version(p: Path, tls: dict[str, Any], key: str, default: str) -> ssl.TLSVersion:
    value = str(tls.get(key, default))
    if value not in _VERSIONS:
        raise _fail(
            p,
            f"tls_server_config.{key}",
            f"unknown TLS version {value!r}",
            f"expected one of {', '.join(_VERSIONS)} (exporter-toolkit's spelling)",
        )
    return _VERSIONS[value]


def _ciphers(p: Path, ctx: ssl.SSLContext, tls: dict[str, Any]) -> None:
    """``cipher_suites`` (Go names, TLS 1.2 and below), ``prefer_server_cipher_suites`` and ``curve_preferences``:
    each either takes effect or is refused; none is accepted and ignored."""
    suites = tls.get("cipher_suites")
    if suites is not None:
        if not isinstance(suites, list) or not suites:
            raise _fail(
                p,
                "tls_server_config.cipher_suites",
                "expected a non-empty list of cipher suite names",
                "e.g. [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]",
            )
        unknown = [str(x) for x in suites if x not in _CIPHERS and x not in _TLS13_SUITES]
        if unknown:
            raise _fail(
                p,
                "tls_server_config.cipher_suites",
                f"unknown or unsupported cipher suite {unknown[0]!r}",
                f"expected Go crypto/tls names: {', '.join(sorted(_CIPHERS))} (TLS 1.3 suites are always on)",
            )
        openssl = [_CIPHERS[x] for x in suites if x in _CIPHERS]
        if openssl:
            try:
                ctx.set_ciphers(":".join(openssl))
            except ssl.SSLError as exc:
                raise _fail(
                    p,
                    "tls_server_config.cipher_suites",
                    f"this OpenSSL offers none of them: {exc}",
                    "name suites your OpenSSL build supports (`openssl ciphers -v`)",
                ) from exc
        elif ctx.minimum_version < ssl.TLSVersion.TLSv1_3:
            raise _fail(
                p,
                "tls_server_config.cipher_suites",
                "only TLS 1.3 suites are named, which are always on",
                "name TLS 1.2 suites too, or set min_version: TLS13",
            )
    prefer = tls.get("prefer_server_cipher_suites")
    if prefer is not None:
        if not isinstance(prefer, bool):
            raise _fail(
                p,
                "tls_server_config.prefer_server_cipher_suites",
                f"expected true or false, got {prefer!r}",
                "write true or false",
            )
        if prefer:
            ctx.options |= ssl.OP_CIPHER_SERVER_PREFERENCE
        else:
            ctx.options &= ~ssl.OP_CIPHER_SERVER_PREFERENCE
    curves = tls.get("curve_preferences")
    if curves is not None:
        if not isinstance(curves, list) or len(curves) != 1 or curves[0] not in _CURVES:
            raise _fail(
                p,
                "tls_server_config.curve_preferences",
                f"expected a list of exactly one of {', '.join(_CURVES)}, got {curves!r}",
                "Python's ssl sets one ECDH curve; list the one to use",
            )
        ctx.set_ecdh_curve(_CURVES[curves[0]])
