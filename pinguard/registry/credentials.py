"""Where credentials for a registry come from: docker's config, its helpers, AWS.

Anonymous access is the default; credentials are looked up only when a
registry asks for them, and they are never printed (their repr is redacted).
"""
from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pinguard import untrusted_json
from pinguard.errors import RegistryError
from pinguard.registry.settings import ECR_PUBLIC

_ECR_PRIVATE = re.compile(r"^\d{12}\.dkr\.ecr(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$")
# Docker Hub credentials are filed under this legacy key in config.json.
_DOCKER_HUB_KEYS = ("https://index.docker.io/v1/", "index.docker.io", "docker.io", "registry-1.docker.io")


@dataclass(frozen=True)
class Credentials:
    username: str
    secret: str = field(repr=False)
    source: str = ""  # where they came from, for messages: "docker config", "credsStore ecr-login", ...

    @property
    def is_identity_token(self) -> bool:
        """docker-credential helpers signal an OAuth2 refresh token with this user name."""
        return self.username == "<token>"

    def __repr__(self) -> str:
        return f"Credentials(username={self.username!r}, secret=<redacted>, source={self.source!r})"


class CredentialStore:
    """Credentials for registries, from docker's config.json and, for ECR, from boto3."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env
        self._config: dict[str, object] | None = None

    def lookup(self, registry: str) -> Credentials | None:
        found = self._from_docker_config(registry)
        if found is None:
            found = self._from_aws(registry)
        return found

    def _docker_config(self) -> dict[str, object]:
        if self._config is None:
            folder = self._env.get("DOCKER_CONFIG") or str(Path(self._env.get("HOME", "~")).expanduser() / ".docker")
            path = Path(folder) / "config.json"
            try:
                loaded = untrusted_json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                loaded = {}
            except (OSError, ValueError) as exc:
                raise RegistryError(f"{path}: cannot read docker config: {exc}") from None
            self._config = loaded if isinstance(loaded, dict) else {}
        return self._config

    def _from_docker_config(self, registry: str) -> Credentials | None:
        config = self._docker_config()
        keys = _DOCKER_HUB_KEYS if registry == "docker.io" else (registry,)
        helpers = config.get("credHelpers")
        if isinstance(helpers, dict):
            for key in keys:
                if isinstance(helpers.get(key), str):
                    return _run_helper(helpers[key], key, self._env)
        auths = config.get("auths")
        if isinstance(auths, dict):
            for key, entry in auths.items():
                if _host_of(key) in keys or key in keys:
                    found = _from_auth_entry(entry, key)
                    if found is not None:
                        return found
        store = config.get("credsStore")
        if isinstance(store, str) and store:
            for key in keys:
                found = _run_helper(store, key, self._env, missing_ok=True)
                if found is not None:
                    return found
        return None

    def _from_aws(self, registry: str) -> Credentials | None:
        match = _ECR_PRIVATE.match(registry)
        if match:
            return _ecr_token("ecr", match.group(1), registry)
        if registry == ECR_PUBLIC and _has_aws_credentials(self._env):
            # Authenticated pulls get ten times the anonymous quota; fall back to anonymous.
            try:
                return _ecr_token("ecr-public", "us-east-1", registry)
            except RegistryError:
                return None
        return None


def _host_of(key: str) -> str:
    return key.split("://", 1)[-1].split("/", 1)[0]


def _from_auth_entry(entry: object, key: str) -> Credentials | None:
    if not isinstance(entry, dict):
        return None
    if entry.get("identitytoken"):
        return Credentials("<token>", str(entry["identitytoken"]), "docker config")
    if entry.get("auth"):
        try:
            user, _, secret = base64.b64decode(str(entry["auth"])).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            raise RegistryError(f"docker config: the 'auth' entry for {key} is not base64 user:password") from None
        return Credentials(user, secret, "docker config")
    if entry.get("username"):
        return Credentials(str(entry["username"]), str(entry.get("password", "")), "docker config")
    return None


def _run_helper(helper: str, server: str, env: Mapping[str, str], *, missing_ok: bool = False) -> Credentials | None:
    import subprocess  # only where a helper is named: most runs start no process

    program = f"docker-credential-{helper}"
    try:
        result = subprocess.run(
            [program, "get"], input=server.encode(), capture_output=True, timeout=30, check=False, env=dict(env)
        )
    except FileNotFoundError:
        if missing_ok:
            return None
        raise RegistryError(f"docker config names credential helper {program!r}, which is not on PATH") from None
    except subprocess.TimeoutExpired:
        raise RegistryError(f"{program} did not answer within 30 s") from None
    if result.returncode != 0:
        # Helpers say "credentials not found in native keychain" for an unknown server.
        if b"not found" in result.stdout + result.stderr:
            return None
        raise RegistryError(f"{program} get failed for {server} (exit {result.returncode})")
    try:
        answer = untrusted_json.loads(result.stdout)
        return Credentials(str(answer["Username"]), str(answer["Secret"]), f"credential helper {helper}")
    except (ValueError, KeyError, TypeError):
        raise RegistryError(f"{program} gave an answer that is not JSON with Username and Secret") from None


def _has_aws_credentials(env: Mapping[str, str]) -> bool:
    if env.get("AWS_ACCESS_KEY_ID") or env.get("AWS_PROFILE") or env.get("AWS_WEB_IDENTITY_TOKEN_FILE"):
        return True
    home = Path(env.get("HOME", "~")).expanduser()
    return (home / ".aws" / "credentials").is_file()


def _ecr_token(service: str, region: str, registry: str) -> Credentials | None:
    """ECR's own token (base64 "AWS:password") through boto3, when the `aws` extra is installed."""
    try:
        import boto3  # heavy and optional: only for ECR, only when asked
    except ImportError:
        return None
    try:
        client = boto3.client(service, region_name=region)
        if service == "ecr":
            data = client.get_authorization_token()["authorizationData"][0]
        else:
            data = client.get_authorization_token()["authorizationData"]
        user, _, secret = base64.b64decode(data["authorizationToken"]).decode().partition(":")
    except Exception as exc:  # botocore raises many unrelated types; all mean "no token"
        raise RegistryError(f"{registry}: could not get an ECR token through boto3: {type(exc).__name__}") from None
    return Credentials(user, secret, f"AWS {service}")
