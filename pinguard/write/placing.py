"""Where each image's digest is written, chosen by what the tool that deploys it shows.

Helm's renders and kustomize's builds are judged the same way: each image to pin has
its placements, in order of preference. All images' current placements are tried
together, once; where the verdict disagrees, the set is halved until the images it
disagrees about are found, and those try their next placement. An image whose every
placement was refused is given up with what each try showed. The placements left
are tried together once more: together they may disagree where apart they did not.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from pinguard.sources.base import Found


class Named(Protocol):
    @property
    def name(self) -> str: ...  # what a message calls the placement


P = TypeVar("P", bound=Named)


@dataclass(frozen=True, eq=False)
class Item(Generic[P]):
    """One image to pin: where it was found, the image as the tool shows it, its locked digest, and its
    placements, best first."""

    found: Found
    image: str
    digest: str
    placements: tuple[P, ...]


class Search(ABC, Generic[P]):
    """The placements a verdict confirms (`verdict`: None when it confirms the items' current placements)."""

    def __init__(self) -> None:
        self._choice: dict[Item[P], int] = {}
        self._tried: dict[Item[P], list[str]] = {}  # what each placement tried showed

    @abstractmethod
    def verdict(self, items: list[Item[P]]) -> str | None: ...

    def placement(self, item: Item[P]) -> P:
        """The placement an item is at now."""
        return item.placements[self._choice.get(item, 0)]

    def settle_all(self, items: list[Item[P]]) -> tuple[list[Item[P]], list[tuple[Item[P], str]]]:
        """Every item placed where the verdict confirms it, else given up with what each try showed."""
        accepted: list[Item[P]] = []
        given_up: list[tuple[Item[P], str]] = []
        pending = items
        while pending:
            confirmed, failed = self._settle(pending)
            accepted.extend(confirmed)
            pending = []
            for item, reason in failed:
                tried = self._tried.setdefault(item, [])
                tried.append(f"{self.placement(item).name}: {reason}")
                self._choice[item] = self._choice.get(item, 0) + 1
                if self._choice[item] < len(item.placements):
                    pending.append(item)
                else:
                    given_up.append((item, "; ".join(tried)))
        together = self.verdict(accepted) if accepted else None
        if together is not None:  # together they disagree where apart they did not
            given_up.extend((item, together) for item in accepted)
            accepted = []
        return accepted, given_up

    def _settle(self, items: list[Item[P]]) -> tuple[list[Item[P]], list[tuple[Item[P], str]]]:
        """The items whose current placements the verdict confirms, found by halving where it does not."""
        problem = self.verdict(items)
        if problem is None:
            return items, []
        if len(items) == 1:
            return [], [(items[0], problem)]
        middle = len(items) // 2
        first, first_failed = self._settle(items[:middle])
        second, second_failed = self._settle(items[middle:])
        return first + second, first_failed + second_failed
