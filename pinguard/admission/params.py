"""The params of the ValidatingAdmissionPolicies: the lock as ConfigMaps that fit, each read by key.

Each ConfigMap holds, as keys (so a policy looks each up at a cost the lock's size
does not change):

- the locked digests (64 hex digits; no value) whose first two digits fall in its
  range, `digests.from` to `digests.to`;
- for each entry of its name class, the entry's name and tag written the one way
  `vap.name_of` writes an image's (`docker.io/library/nginx:1.25` for `nginx:1.25`)
  and encoded into the characters a key may hold (`_` as `__`, then `/` `:` `[` `]`
  as `_s` `_c` `_l` `_r`), whose value is the entry's index digest (its hex). An
  entry's class is the sum of the places of its name's characters in `NAME_ALPHABET`
  (counted from 1, 0 for any other, so the sum is never negative: CEL's `%`, like Go's,
  keeps the sign of a negative sum, Python's does not), modulo `names.classes`;
  `names.class` is the ConfigMap's.

A lock that does not fit in one ConfigMap is split over a grid: `n` digest ranges by
`m` name classes, one ConfigMap a cell, each digest in the `m` cells of its range and
each name in the `n` of its class. Every cell has bindings of its own, naming it (a
missing ConfigMap denies everything), and a container is judged in exactly one: the
cell of its name's class and of its digest's range (the first range when it has no
digest). So whichever cell denies a container holds its entry and names it, and the
API server, which answers with the message of whichever denial it meets first, names
it too. The layout (`n`x`m`) is the smallest that fits; a cell's name says its place
in it and its range and class are the ones its place says, so cells of two locks of
one layout, mixed mid-update, each judge what they always judged.

The grid copies each digest into every class of its range and each name into every
range of its class, so a large lock fits no grid of `MAX_CELLS` (20,000 entries of
three digests need about 300 cells). Such a lock is written as digests only: `n`
ranges of one class, no name keys, and `names.omitted` set. Its cells judge exactly
what the cells of an `n`x1 grid judge (a container in the cell of its digest's range),
so they share the grid's names and label; only the denial is vaguer, naming no entry.

What fits: the API server refuses a ConfigMap whose values exceed 1 MiB, and etcd a
request over 1.5 MiB, which counts the whole stored object: keys and values, metadata,
and the `managedFields` of server-side apply, which repeat every key once for each
field manager that applied it. `stored_size` counts keys three times (the data, two
managers), the metadata three times, and a margin; each ConfigMap is kept under
`STORED_BUDGET`, below both limits; a lock whose digests alone need more than
`MAX_CELLS` of them is refused, with what each digest costs and how many it needs.
"""
from __future__ import annotations

import bisect
import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from pinguard.admission.objects import Source
from pinguard.errors import InvalidReference, PinguardError
from pinguard.lock.lockfile import LockEntry
from pinguard.reference import parse

FROM, TO, CLASS, CLASSES = "digests.from", "digests.to", "names.class", "names.classes"
OMITTED = "names.omitted"  # set ("true") in the cells of a layout of digests only; absent elsewhere
NAME_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
KEY_ESCAPES = (("_", "__"), ("/", "_s"), (":", "_c"), ("[", "_l"), ("]", "_r"))  # in this order
KEY_LIMIT = 253  # characters in a ConfigMap key
VALUES_LIMIT = 1024 * 1024  # bytes of values in a ConfigMap: the API server's check
ETCD_LIMIT = 1536 * 1024  # bytes of one request to etcd, the stored object and all
STORED_BUDGET = 900 * 1024  # what `stored_size` may say of a ConfigMap
MAX_CELLS = 128
_MANAGERS = 2  # field managers assumed to own every key (`kubectl apply --server-side` and `pinguard run`)
_ENTRY_OVERHEAD = 8  # bytes around a key and value in the protobuf etcd stores, and around a key in managedFields
_MARGIN = 4096  # uid, timestamps, resourceVersion, the encryption envelope
_RANGES = 256  # digest ranges are cut on the first two hex digits
_HEX_DIGITS = 64  # of a digest, its key
# Bytes of a cell's metadata but its annotations: name (at most 253 and the cell's place), namespace, four labels.
_METADATA = 1024


@dataclass(frozen=True)
class Layout:
    ranges: int  # n: digest ranges
    classes: int  # m: name classes
    names: bool = True  # False: digests only (one class), no entry named

    def __str__(self) -> str:
        return f"{self.ranges}x{self.classes}"

    def settings(self, index: int, name_class_: int) -> dict[str, str]:
        """What the cell of range `index` and class `name_class_` says of its place: what it judges."""
        first, last = _range(index, self.ranges)
        return {FROM: first, TO: last, CLASS: str(name_class_), CLASSES: str(self.classes),
                **({} if self.names else {OMITTED: "true"})}


@dataclass(frozen=True)
class Cell:
    layout: Layout
    range: int
    name_class: int
    data: dict[str, str]

    @property
    def id(self) -> str:
        """The cell's place: `<range>-<class>-of-<n>x<m>`; empty in a layout of one."""
        return "" if (self.layout.ranges, self.layout.classes) == (1, 1) else (
            f"{self.range}-{self.name_class}-of-{self.layout}")


def entry_name(entry: LockEntry, lockfile: str) -> str:
    """`name:tag` of an entry as `vap.NAME` writes an image's; an entry that is no image name and tag is an error."""
    try:
        reference = parse(f"{entry.name}:{entry.tag}")  # what a valid name and tag may hold, nothing else
        if reference.tag != entry.tag or reference.digest is not None:
            raise InvalidReference(f"the tag {entry.tag!r} is no tag")
    except InvalidReference as exc:
        raise PinguardError(f"{lockfile}: {entry.name}:{entry.tag}: {exc}") from None
    return f"{reference.name}:{entry.tag}"


def key(name: str) -> str:
    """The ConfigMap key of a `name:tag`."""
    for char, escape in KEY_ESCAPES:
        name = name.replace(char, escape)
    return name


def name_class(name: str, classes: int) -> int:
    return _places(name) % classes


def _places(name: str) -> int:
    """The sum of the places of the characters of `name` in NAME_ALPHABET, from 1; 0 for any other."""
    return sum(NAME_ALPHABET.find(char) + 1 for char in name)


def cells(source: Source) -> list[Cell]:
    """The lock's params, split over the smallest layout whose every cell fits."""
    digests = _digests(source)
    names = _names(source)
    layout = _layout(source, digests, names)
    by_class: list[dict[str, str]] = [{} for _ in range(layout.classes)]
    if layout.names:
        for name, hex_ in names.items():
            by_class[name_class(name, layout.classes)][key(name)] = hex_
    found = []
    for index in range(layout.ranges):
        first, last = _range(index, layout.ranges)
        # Sorted, so a range is a slice: `g` follows every hex digit.
        in_range = dict.fromkeys(digests[bisect.bisect_left(digests, first):bisect.bisect_left(digests, last + "g")],
                                 "")
        for name_class_, class_names in enumerate(by_class):
            data = {**in_range, **class_names, **layout.settings(index, name_class_)}
            found.append(Cell(layout, index, name_class_, dict(sorted(data.items()))))
    return found


def layout_of(source: Source) -> Layout:
    """The layout `cells` splits the lock over, without building the cells."""
    return _layout(source, _digests(source), _names(source))


def stored_size(obj: Mapping[str, Any]) -> int:
    """An upper bound of the bytes etcd stores for ConfigMap `obj` once applied (see the module's docstring)."""
    data: Mapping[str, str] = obj.get("data") or {}
    entries = sum(_entry_size(k, v) for k, v in data.items())
    metadata = len(json.dumps(obj["metadata"]).encode())
    return entries + (_MANAGERS + 1) * metadata + _MARGIN


def _digests(source: Source) -> list[str]:
    """The hex of every digest the lock vouches for, sorted."""
    return sorted({digest.removeprefix("sha256:") for digest in source.digests()})


def _names(source: Source) -> dict[str, str]:
    """Each entry's `name:tag`, as `vap.NAME` writes it, to the hex of its index digest."""
    names: dict[str, str] = {}
    written: dict[str, LockEntry] = {}
    for entry in source.lock:
        name = entry_name(entry, source.lockfile)
        if name in written:
            other = written[name]
            raise PinguardError(f"{source.lockfile}: {other.name}:{other.tag} and {entry.name}:{entry.tag} are the "
                                "same image: keep one")
        if len(key(name)) > KEY_LIMIT:
            raise PinguardError(f"{source.lockfile}: {entry.name}:{entry.tag}: too long for the admission params "
                                f"(a ConfigMap key holds {KEY_LIMIT} characters)")
        written[name] = entry
        names[name] = entry.digest.removeprefix("sha256:")
    return names


def _range(index: int, ranges: int) -> tuple[str, str]:
    """The first two hex digits of the first and last digests of range `index` of `ranges`."""
    return f"{_RANGES * index // ranges:02x}", f"{_RANGES * (index + 1) // ranges - 1:02x}"


def _entry_size(key_: str, value: str) -> int:
    return len(key_) + len(value.encode()) + _ENTRY_OVERHEAD + _MANAGERS * (len(key_) + _ENTRY_OVERHEAD)


_DIGEST_SIZE = _entry_size("0" * _HEX_DIGITS, "")  # what a digest costs a cell as stored


def _layout(source: Source, digests: list[str], names: Mapping[str, str]) -> Layout:
    """The smallest grid (fewest cells, then fewest name classes) whose every cell fits; else the fewest ranges of
    digests only that fit."""
    per_prefix = [0] * _RANGES
    for digest in digests:
        per_prefix[int(digest[:2], 16)] += 1
    metadata = _METADATA + len(json.dumps(source.annotations()).encode())
    budget = STORED_BUDGET - 4 * _entry_size(CLASSES, str(MAX_CELLS)) - (_MANAGERS + 1) * metadata - _MARGIN

    def fullest_range(ranges: int) -> int:
        """The most digests a range of `ranges` holds."""
        bounds = [_RANGES * index // ranges for index in range(ranges + 1)]
        return max(sum(per_prefix[start:end]) for start, end in itertools.pairwise(bounds))

    name_sizes = [(_places(name), _entry_size(key(name), hex_)) for name, hex_ in names.items()]
    all_names = sum(size for _, size in name_sizes)

    @cache
    def fullest_class(classes: int) -> int:
        sizes = [0] * classes
        for places, size in name_sizes:
            sizes[places % classes] += size
        return max(sizes)

    for total in range(1, MAX_CELLS + 1):
        for classes in (m for m in range(1, total + 1) if total % m == 0 and total // m <= _RANGES):
            room = budget - fullest_range(total // classes) * _DIGEST_SIZE
            # A class holds at least the mean: most grids are ruled out before their classes are counted.
            if all_names <= room * classes and fullest_class(classes) <= room:
                return Layout(total // classes, classes)
    budget -= _entry_size(OMITTED, "true")
    for ranges in range(1, MAX_CELLS + 1):
        if fullest_range(ranges) * _DIGEST_SIZE <= budget:
            return Layout(ranges, 1, names=False)
    raise PinguardError(_too_large(source.lockfile, len(digests), budget, fullest_range(MAX_CELLS)))


def _too_large(lockfile: str, digests: int, budget: int, fullest: int) -> str:
    """Why no layout fits, in numbers that add up: a lock of digests only needs this many ConfigMaps."""
    held = max(budget, 0) // _DIGEST_SIZE
    needed = f"at least {-(-digests // held):,}" if held else "more than any number of"
    split = (f"more than the {MAX_CELLS} ConfigMaps pinguard writes at most" if not held or digests > held * MAX_CELLS
             else f"and split by their first two hex digits over {MAX_CELLS} ConfigMaps, the fullest holds "
             f"{fullest:,}, more than {held:,}")
    entry = _HEX_DIGITS + _ENTRY_OVERHEAD
    return (f"{lockfile}: the lock's {digests:,} digests do not fit in admission params: each costs {_DIGEST_SIZE} "
            f"bytes as etcd stores it ({entry} for its key in the data, and {entry} again in each of {_MANAGERS} "
            f"field managers' managedFields), {digests * _DIGEST_SIZE // 1024:,} KiB in all; a ConfigMap of at most "
            f"{STORED_BUDGET // 1024} KiB ({STORED_BUDGET:,} bytes, {STORED_BUDGET - budget:,} of them metadata and "
            f"settings) holds {held:,}, so they need {needed} ConfigMaps, {split} (etcd stores at most "
            f"{ETCD_LIMIT // 1024} KiB an object): lock fewer images, or export a lock for each part of the cluster")
