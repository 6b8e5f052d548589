"""The search for placements the deploying tool confirms: the items it blames, else halving to the items it refuses,
then their next place; every verdict holds what was confirmed before it."""
from __future__ import annotations

from dataclasses import dataclass

from pinguard.sources.base import Found, Span
from pinguard.write.placing import Item, Search


@dataclass(frozen=True)
class Place:
    name: str


class _Tool(Search[Place]):
    """Refuses a place named in `refused`, and `clash` (a pair of images) placed together."""

    def __init__(self, refused: set[str], clash: frozenset[str] = frozenset(), *, tells: bool = False) -> None:
        super().__init__()
        self.refused = refused
        self.clash = clash
        self.tells = tells  # whether it names the items at fault
        self.calls = 0
        self.seen: list[list[str]] = []

    def verdict(self, items: list[Item[Place]]) -> str | None:
        self.calls += 1
        self.seen.append([item.image for item in items])
        places = [self.placement(item).name for item in items]
        bad = [place for place in places if place in self.refused]
        if bad:
            return f"{bad[0]} breaks the render"
        if self.clash and self.clash <= {item.image for item in items}:
            return "together they break it"
        return None

    def culprits(self, items: list[Item[Place]]) -> dict[Item[Place], str] | None:
        if not self.tells:
            return None
        return {item: "it breaks the render" for item in items if self.placement(item).name in self.refused}


def _item(image: str, *places: str) -> Item[Place]:
    found = Found("values.yaml", "helm", Span(0, 1, 1, 1), image, None)
    return Item(found, image, "sha256:" + "a" * 64, tuple(Place(place) for place in places))


def test_all_accepted_takes_one_verdict() -> None:
    tool = _Tool(set())
    items = [_item(f"i{n}", f"p{n}") for n in range(8)]
    assert tool.settle_all(items) == (items, [])
    assert tool.calls == 1


def test_items_the_verdict_blames_move_on_and_all_are_tried_together_again() -> None:
    tool = _Tool({"a-digest", "c-digest"}, tells=True)
    a, b, c = _item("a", "a-digest", "a-tag"), _item("b", "b-digest"), _item("c", "c-digest")
    accepted, given_up = tool.settle_all([a, b, c])
    assert (set(accepted), given_up) == ({a, b}, [(c, "c-digest: it breaks the render")])
    assert tool.placement(a) == Place("a-tag")
    assert tool.calls == 2 and sorted(tool.seen[-1]) == ["a", "b"]


def test_a_refused_place_is_found_by_halving_and_its_next_place_tried() -> None:
    tool = _Tool({"a-digest"})
    a, b, c = _item("a", "a-digest", "a-tag"), _item("b", "b-digest"), _item("c", "c-digest")
    accepted, given_up = tool.settle_all([a, b, c])
    assert (accepted, given_up) == ([b, c, a], [])
    assert tool.placement(a) == Place("a-tag")


def test_an_item_whose_every_place_is_refused_is_given_up_with_each_try() -> None:
    tool = _Tool({"a-digest", "a-tag"})
    a, b = _item("a", "a-digest", "a-tag"), _item("b", "b-digest")
    accepted, given_up = tool.settle_all([a, b])
    assert accepted == [b]
    assert given_up == [(a, "a-digest: a-digest breaks the render; a-tag: a-tag breaks the render")]


def test_a_place_that_disagrees_with_one_confirmed_before_is_given_up() -> None:
    tool = _Tool(set(), clash=frozenset({"a", "b"}))
    a, b = _item("a", "a-digest"), _item("b", "b-digest")
    accepted, given_up = tool.settle_all([a, b])
    assert accepted == [a]
    assert given_up == [(b, "b-digest: together they break it")]


def test_every_verdict_holds_the_items_settled_before() -> None:
    tool = _Tool({"c-digest"})
    settled = [_item("s", "s-digest")]
    b, c = _item("b", "b-digest"), _item("c", "c-digest")
    accepted, given_up = tool.settle_all([b, c], settled)
    assert accepted == [b] and [item for item, _ in given_up] == [c]
    assert all(seen[0] == "s" for seen in tool.seen)
