"""The registry tests' fake registry and the client that reaches it, for the resolver's tests too."""
from tests.registry.conftest import client, fake

__all__ = ["client", "fake"]
