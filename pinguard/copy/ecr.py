"""Repositories made in a private ECR registry before copying into it (`--create-repositories`).

ECR, unlike most registries, does not make a repository on the first push to it. Each one a copy
needs is created through boto3 with the tag mutability and scanning the policy names; one that
exists already is left as it is.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pinguard.errors import PinguardError

_PRIVATE_ECR = re.compile(r"(\d{12})\.dkr\.ecr(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?")
TAG_MUTABILITY = ("MUTABLE", "IMMUTABLE")


@dataclass(frozen=True)
class RepositorySettings:
    """How new repositories are made; ECR's own defaults unless the policy says otherwise."""

    tag_mutability: str = "MUTABLE"
    scan_on_push: bool = False

    def __post_init__(self) -> None:
        if self.tag_mutability not in TAG_MUTABILITY:
            raise PinguardError(f"tag mutability {self.tag_mutability!r}: expected one of {', '.join(TAG_MUTABILITY)}")


def repository_options(section: Mapping[Any, Any]) -> dict[str, Any]:
    """A policy's `ecr: {tag-mutability, scan-on-push}` as RepositorySettings' keyword arguments: only what it sets,
    so a policy that `extends` another overrides key by key. A ValueError of (the key, what is wrong with it), the
    key "" for the section itself."""
    unknown = sorted(set(section) - {"tag-mutability", "scan-on-push"}, key=str)
    if unknown:
        raise ValueError("", f"unknown key {unknown[0]!r} (known: tag-mutability, scan-on-push)")
    options: dict[str, Any] = {}
    if "tag-mutability" in section:
        if section["tag-mutability"] not in TAG_MUTABILITY:
            raise ValueError("tag-mutability", f"expected one of {', '.join(TAG_MUTABILITY)}")
        options["tag_mutability"] = section["tag-mutability"]
    if "scan-on-push" in section:
        if not isinstance(section["scan-on-push"], bool):
            raise ValueError("scan-on-push", "expected true or false")
        options["scan_on_push"] = section["scan-on-push"]
    return options


def _private_ecr(registry: str) -> tuple[str, str] | None:
    """(account, region) of a private ECR registry's host; None for any other registry."""
    match = _PRIVATE_ECR.fullmatch(registry)
    return (match.group(1), match.group(2)) if match else None


def create_repositories(registry: str, repositories: Iterable[str], settings: RepositorySettings) -> list[str]:
    """Each repository created where it does not exist yet; the names of those created."""
    found = _private_ecr(registry)
    if found is None:
        raise PinguardError(f"--create-repositories: {registry} is not a private ECR registry "
                            "(ACCOUNT.dkr.ecr.REGION.amazonaws.com); other registries make repositories on push")
    account, region = found
    try:
        import boto3  # heavy and optional: only for ECR, only when asked
    except ImportError:
        raise PinguardError("--create-repositories needs boto3: pip install 'pinguard[aws]'") from None
    ecr = boto3.client("ecr", region_name=region)
    created = []
    for name in dict.fromkeys(repositories):
        try:
            ecr.create_repository(registryId=account, repositoryName=name,
                                  imageTagMutability=settings.tag_mutability,
                                  imageScanningConfiguration={"scanOnPush": settings.scan_on_push})
        except ecr.exceptions.RepositoryAlreadyExistsException:
            continue
        except Exception as exc:  # botocore raises many unrelated types: credentials, access, throttling
            raise PinguardError(f"{registry}/{name}: could not create the repository through boto3: "
                                f"{_why(exc)}") from None
        created.append(name)
    return created


def _why(exc: Exception) -> str:
    """The error's kind and AWS's code for it (botocore's ClientError carries one), never its whole text."""
    response = getattr(exc, "response", None)
    error = response.get("Error") if isinstance(response, dict) else None
    code = error.get("Code") if isinstance(error, dict) else None
    return f"{type(exc).__name__} ({code})" if isinstance(code, str) else type(exc).__name__
