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

What fits: the API server refuses a ConfigMap whose values exceed 1 MiB, and etcd a
request over 1.5 MiB, which counts the whole stored object: keys and values, metadata,
and the `managedFields` of server-side apply, which repeat every key once for each
field manager that applied it. `stored_size` counts keys three times (the data, two
managers), the metadata three times, and a margin; each ConfigMap is kept under
`STORED_BUDGET`, below both limits; a lock that needs more than `MAX_CELLS` of them is
refused, with its size and the limit.
"""
from __future__ import annotations

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
# Bytes of a cell's metadata but its annotations: name (at most 253 and the cell's place), namespace, four labels.
_METADATA = 1024


@dataclass(frozen=True)
class Layout:
    ranges: int  # n: digest ranges
    classes: int  # m: name classes

    def __str__(self) -> str:
        return f"{self.ranges}x{self.classes}"


@dataclass(frozen=True)
class Cell:
    layout: Layout
    range: int
    name_class: int
    data: dict[str, str]

    @property
    def id(self) -> str:
        """The cell's place: `<range>-<class>-of-<n>x<m>`; empty in a layout of one."""
        return "" if self.layout == Layout(1, 1) else f"{self.range}-{self.name_class}-of-{self.layout}"


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
    digests = sorted({digest.removeprefix("sha256:") for digest in source.digests()})
    names = _names(source)
    layout = _layout(source, digests, names)
    by_class: list[dict[str, str]] = [{} for _ in range(layout.classes)]
    for name, hex_ in names.items():
        by_class[name_class(name, layout.classes)][key(name)] = hex_
    found = []
    for index in range(layout.ranges):
        first, last = _range(index, layout.ranges)
        in_range = dict.fromkeys((digest for digest in digests if first <= digest[:2] <= last), "")
        for name_class_, class_names in enumerate(by_class):
            data = {**in_range, **class_names, FROM: first, TO: last, CLASS: str(name_class_),
                    CLASSES: str(layout.classes)}
            found.append(Cell(layout, index, name_class_, dict(sorted(data.items()))))
    return found


def stored_size(obj: Mapping[str, Any]) -> int:
    """An upper bound of the bytes etcd stores for ConfigMap `obj` once applied (see the module's docstring)."""
    data: Mapping[str, str] = obj.get("data") or {}
    entries = sum(_entry_size(k, v) for k, v in data.items())
    metadata = len(json.dumps(obj["metadata"]).encode())
    return entries + (_MANAGERS + 1) * metadata + _MARGIN


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


def _layout(source: Source, digests: list[str], names: Mapping[str, str]) -> Layout:
    """The smallest grid (fewest cells, then fewest name classes) whose every cell fits."""
    prefix_sizes = [0] * _RANGES
    for digest in digests:
        prefix_sizes[int(digest[:2], 16)] += _entry_size(digest, "")
    metadata = _METADATA + len(json.dumps(source.annotations()).encode())
    budget = STORED_BUDGET - 4 * _entry_size(CLASSES, str(MAX_CELLS)) - (_MANAGERS + 1) * metadata - _MARGIN

    name_sizes = [(_places(name), _entry_size(key(name), hex_)) for name, hex_ in names.items()]

    @cache
    def largest_class(classes: int) -> int:
        sizes = [0] * classes
        for places, size in name_sizes:
            sizes[places % classes] += size
        return max(sizes)

    for total in range(1, MAX_CELLS + 1):
        for classes in (m for m in range(1, total + 1) if total % m == 0 and total // m <= _RANGES):
            ranges = total // classes
            largest_range = max(sum(prefix_sizes[int(first, 16):int(last, 16) + 1])
                                for first, last in (_range(index, ranges) for index in range(ranges)))
            if largest_range + largest_class(classes) <= budget:
                return Layout(ranges, classes)
    size = sum(prefix_sizes) + sum(_entry_size(key(name), hex_) for name, hex_ in names.items())
    raise PinguardError(
        f"{source.lockfile}: {len(digests)} digests and {len(names)} entries make admission params of about "
        f"{size // 1024} KiB, more than {MAX_CELLS} ConfigMaps of {STORED_BUDGET // 1024} KiB hold (etcd stores at "
        f"most {ETCD_LIMIT // 1024} KiB an object): lock fewer images, or export a lock for each part of the cluster")
