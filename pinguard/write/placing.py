"""Where each image's digest is written, chosen by what the tool that deploys it shows.

Helm's renders and kustomize's builds are judged the same way: each image to pin has
its placements, in order of preference. All images' current placements are tried
together, once. Where the verdict disagrees and can say which items are at fault
(`culprits`), those try their next placement and all are tried together again; where it
cannot, the set is halved until the items it disagrees about are found. An image whose
every placement was refused is given up with what each try showed.

Every verdict includes every placement confirmed before it, so the last verdict that
passed has seen all of the accepted placements together: no set is accepted that was
only ever confirmed in parts.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
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

    def culprits(self, items: list[Item[P]]) -> dict[Item[P], str] | None:
        """After the last verdict refused a set holding `items`, those of them at fault and why, where the verdict
        can tell; None where it cannot (the search halves then)."""
        return None

    def placement(self, item: Item[P]) -> P:
        """The placement an item is at now."""
        return item.placements[self._choice.get(item, 0)]

    def settle_all(self, items: Sequence[Item[P]], settled: Sequence[Item[P]] = ()
                   ) -> tuple[list[Item[P]], list[tuple[Item[P], str]]]:
        """Every item placed where the verdict confirms it, together with the `settled` ones (confirmed before,
        kept where they are), else given up with what each try showed."""
        accepted: list[Item[P]] = []
        given_up: list[tuple[Item[P], str]] = []
        pending = list(items)
        while pending:
            base = [*settled, *accepted]
            problem = self.verdict([*base, *pending])
            if problem is None:
                accepted.extend(pending)
                break
            blamed = self.culprits(pending) if len(pending) > 1 else {pending[0]: problem}
            blamed = {item: why for item, why in (blamed or {}).items() if item in pending}
            if blamed:
                failed = list(blamed.items())
            else:
                confirmed, failed = self._halve(pending, base)
                accepted.extend(confirmed)
            retried = self._advance(failed, given_up)
            pending = [*(item for item in pending if item not in blamed), *retried] if blamed else retried
        return accepted, given_up

    def _advance(self, failed: list[tuple[Item[P], str]], given_up: list[tuple[Item[P], str]]) -> list[Item[P]]:
        """The failed items that have a next placement, moved to it; the others given up."""
        retried = []
        for item, reason in failed:
            tried = self._tried.setdefault(item, [])
            tried.append(f"{self.placement(item).name}: {reason}")
            self._choice[item] = self._choice.get(item, 0) + 1
            if self._choice[item] < len(item.placements):
                retried.append(item)
            else:
                given_up.append((item, "; ".join(tried)))
        return retried

    def _halve(self, items: list[Item[P]], base: list[Item[P]]
               ) -> tuple[list[Item[P]], list[tuple[Item[P], str]]]:
        """Of `items`, refused together with `base`: those confirmed in halves (each half with what was confirmed
        before it), and those refused alone."""
        middle = len(items) // 2
        first, first_failed = self._settle(items[:middle], base)
        second, second_failed = self._settle(items[middle:], [*base, *first])
        return [*first, *second], [*first_failed, *second_failed]

    def _settle(self, items: list[Item[P]], base: list[Item[P]]
                ) -> tuple[list[Item[P]], list[tuple[Item[P], str]]]:
        problem = self.verdict([*base, *items])
        if problem is None:
            return items, []
        if len(items) == 1:
            return [], [(items[0], problem)]
        return self._halve(items, base)
