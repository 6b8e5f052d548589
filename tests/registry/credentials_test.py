from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from pinguard.errors import RegistryError
from pinguard.registry.credentials import Credentials, CredentialStore


def _store(tmp_path: Path, config: dict[str, object], **env: str) -> CredentialStore:
    (tmp_path / "config.json").write_text(json.dumps(config))
    return CredentialStore({"DOCKER_CONFIG": str(tmp_path), "HOME": str(tmp_path),
                            "PATH": f"{tmp_path}:{os.environ['PATH']}", **env})


def _helper(tmp_path: Path, name: str, answers: dict[str, tuple[str, str]]) -> None:
    """A docker-credential-NAME program that knows `answers` and says "not found" otherwise."""
    table = {server: {"Username": user, "Secret": secret} for server, (user, secret) in answers.items()}
    script = tmp_path / f"docker-credential-{name}"
    script.write_text(
        "#!/usr/bin/env python3\nimport json, sys\n"
        f"table = {json.dumps(table)!r}\n"
        "server = sys.stdin.read().strip()\n"
        "answer = json.loads(table).get(server)\n"
        "if answer is None:\n    print('credentials not found in native keychain'); sys.exit(1)\n"
        "print(json.dumps(answer))\n"
    )
    script.chmod(0o755)


def _auth(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


def test_auths_entry(tmp_path: Path) -> None:
    store = _store(tmp_path, {"auths": {"registry.example.com:5000": {"auth": _auth("alice", "s3cret")}}})
    found = store.lookup("registry.example.com:5000")
    assert found is not None and (found.username, found.secret) == ("alice", "s3cret")
    assert store.lookup("other.example.com") is None


def test_docker_hub_legacy_key(tmp_path: Path) -> None:
    store = _store(tmp_path, {"auths": {"https://index.docker.io/v1/": {"auth": _auth("bob", "pw")}}})
    found = store.lookup("docker.io")
    assert found is not None and found.username == "bob"


def test_identity_token(tmp_path: Path) -> None:
    store = _store(tmp_path, {"auths": {"r.example.com": {"identitytoken": "refresh-me"}}})
    found = store.lookup("r.example.com")
    assert found is not None and found.is_identity_token and found.secret == "refresh-me"


def test_cred_helpers_take_precedence(tmp_path: Path) -> None:
    _helper(tmp_path, "corp", {"r.example.com": ("helper-user", "helper-secret")})
    store = _store(tmp_path, {"credHelpers": {"r.example.com": "corp"},
                              "auths": {"r.example.com": {"auth": _auth("stale", "x")}}})
    found = store.lookup("r.example.com")
    assert found is not None and (found.username, found.secret) == ("helper-user", "helper-secret")
    assert found.source == "credential helper corp"


def test_creds_store_fallback_and_not_found(tmp_path: Path) -> None:
    _helper(tmp_path, "desktop", {"r.example.com": ("store-user", "store-secret")})
    store = _store(tmp_path, {"credsStore": "desktop"})
    found = store.lookup("r.example.com")
    assert found is not None and found.username == "store-user"
    assert store.lookup("unknown.example.com") is None


def test_missing_named_helper_is_an_error(tmp_path: Path) -> None:
    store = _store(tmp_path, {"credHelpers": {"r.example.com": "absent"}})
    with pytest.raises(RegistryError, match="docker-credential-absent"):
        store.lookup("r.example.com")


def test_corrupt_config_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(RegistryError, match=r"config\.json"):
        CredentialStore({"DOCKER_CONFIG": str(tmp_path)}).lookup("r.example.com")


def test_secret_never_in_repr() -> None:
    text = repr(Credentials("alice", "hunter2", "docker config")) + str(Credentials("a", "hunter2"))
    assert "hunter2" not in text


def test_ecr_public_is_anonymous_without_aws_credentials(tmp_path: Path) -> None:
    assert _store(tmp_path, {}).lookup("public.ecr.aws") is None
