"""A FAKE `boto3` module for tests: `client("ecr", region_name=...)` answers `create_repository` from
memory and records every call; nothing here reaches AWS. Tests put it in `sys.modules["boto3"]`."""
from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any


class RepositoryAlreadyExistsException(Exception):
    """As botocore's modelled error of that name."""


class AccessDeniedException(Exception):
    def __init__(self) -> None:
        super().__init__("User: arn:aws:iam::123456789012:user/ci is not authorized")
        self.response = {"Error": {"Code": "AccessDeniedException", "Message": str(self)}}


@dataclass
class FakeEcr:
    region: str
    owner: FakeBoto3
    exceptions: Any = field(default_factory=lambda: types.SimpleNamespace(
        RepositoryAlreadyExistsException=RepositoryAlreadyExistsException))

    def create_repository(self, **arguments: Any) -> dict[str, Any]:
        self.owner.calls.append((self.region, arguments))
        if self.owner.denied:
            raise AccessDeniedException()
        key = (arguments["registryId"], arguments["repositoryName"])
        if key in self.owner.repositories:
            raise RepositoryAlreadyExistsException(f"{key[1]} exists")
        self.owner.repositories.add(key)
        return {"repository": {"repositoryName": key[1], "registryId": key[0]}}


class FakeBoto3(types.ModuleType):
    """Stands for the `boto3` module: repositories kept as (registry id, name)."""

    def __init__(self, repositories: set[tuple[str, str]] | None = None, *, denied: bool = False) -> None:
        super().__init__("boto3")
        self.repositories = set(repositories or ())
        self.denied = denied
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def client(self, service: str, region_name: str | None = None) -> FakeEcr:
        if service != "ecr":
            raise NotImplementedError(f"the fake boto3 has no {service} client")
        return FakeEcr(region_name or "", self)
