"""The lock's `[[action]]` entries: checked when made, written and read back equal, refused with file:line when
the file contradicts itself, and found by the `uses:` that name them."""
from __future__ import annotations

import pytest

from pinguard.lock import lockfile
from pinguard.lock.actions import ActionEntry, ActionIndex
from pinguard.lock.lockfile import Lock, LockfileError
from pinguard.sources.base import REMOTE, ActionUse, Span
from pinguard.uses import parse_uses

A, B = "a" * 40, "b" * 40
AT = "2026-12-02T00:00:00Z"
CHECKOUT = ActionEntry("actions/checkout", "v6", A, "moving", "v6.0.1", AT)


def _use(value: str, version: str | None = None) -> ActionUse:
    return ActionUse("ci.yml", Span(0, len(value), 1, 1), value, REMOTE, parse_uses(value), version=version)


@pytest.mark.parametrize(("fields", "message"), [
    ({"repository": "Actions/checkout"}, "not lower-cased owner/repo"),
    ({"repository": "actions"}, "not owner/repo"),
    ({"ref": "v6..1"}, "is no git ref"),
    ({"commit": "A" * 40}, "commit: 'AAAA"),
    ({"commit": "a" * 39}, "is not 40 (or 64) lowercase hex digits"),
    ({"ref_kind": "sticky"}, "ref_kind: 'sticky' is not one of branch, moving, frozen, tag, commit"),
    ({"ref_kind": "commit"}, "`commit` is the kind of a ref that is the commit itself"),
    ({"ref_found": False}, "only a commit written as the ref"),
    ({"frozen_tag": "v6 .0"}, "frozen_tag: 'v6 .0' is no git ref"),
    ({"resolved_at": ""}, "resolved_at: empty"),
])
def test_an_entry_that_contradicts_itself_is_refused(fields: dict[str, object], message: str) -> None:
    values: dict[str, object] = {"repository": "actions/checkout", "ref": "v6", "commit": A, "ref_kind": "moving",
                                 "frozen_tag": None, "resolved_at": AT, **fields}
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ActionEntry(**values)  # type: ignore[arg-type]


def test_entries_are_written_sorted_and_read_back_equal() -> None:
    forked = ActionEntry("acme/deploy", B, B, "commit", None, AT, ref_found=False)
    lock = Lock().with_actions([CHECKOUT, forked])
    text = lockfile.dumps(lock)
    assert text.index("acme/deploy") < text.index("actions/checkout")
    assert "ref_found = false" in text and text.count("frozen_tag") == 1
    assert lockfile.loads(text) == lock
    assert lockfile.dumps(lockfile.loads(text)) == text


def test_images_kept_and_replaced_keep_the_actions() -> None:
    lock = Lock().with_actions([CHECKOUT])
    assert lock.only(set()).actions == lock.actions and lock.with_entries([]).actions == lock.actions


@pytest.mark.parametrize(("table", "message"), [
    ('repository = "actions/checkout"\nref = "v6"\ncommit = "zz"\nref_kind = "moving"\nresolved_at = "x"\n',
     r"pinguard.lock:3:1: \[\[action\]\] #1 \(actions/checkout@v6\): commit: 'zz'"),
    ('repository = "actions/checkout"\nref = "v6"\nref_kind = "moving"\nresolved_at = "x"\n',
     r"pinguard.lock:3:1: \[\[action\]\] #1 \(actions/checkout@v6\): missing key `commit`"),
    (f'repository = "actions/checkout"\nref = "v6"\ncommit = "{A}"\nref_kind = "moving"\nresolved_at = 3\n',
     "resolved_at: expected a string, got an integer"),
    (f'repository = "actions/checkout"\nref = "v6"\ncommit = "{A}"\nref_kind = "moving"\nresolved_at = "x"\n'
     'ref_found = "no"\n', "ref_found: expected a boolean, got a string"),
])
def test_a_bad_table_is_refused_with_its_place(table: str, message: str) -> None:
    with pytest.raises(LockfileError, match=message):
        lockfile.loads(f"version = 1\n\n[[action]]\n{table}")


def test_the_same_ref_twice_is_refused() -> None:
    table = f'[[action]]\nrepository = "actions/checkout"\nref = "v6"\ncommit = "{A}"\nref_kind = "moving"\n' \
            'resolved_at = "x"\n'
    with pytest.raises(LockfileError, match=r"#2 .*the same repository and ref as \[\[action\]\] #1"):
        lockfile.loads(f"version = 1\n{table}{table}")


def test_a_key_this_version_does_not_know_is_dropped() -> None:
    text = lockfile.dumps(Lock().with_actions([CHECKOUT]))
    assert lockfile.loads(text.replace('ref_kind = "moving"', 'ref_kind = "moving"\nfuture = 1')) == \
        lockfile.loads(text)


def test_a_use_finds_its_entry_by_ref_frozen_tag_or_commit() -> None:
    pinned_v6 = ActionEntry("actions/checkout", "v6.0.1", B, "frozen", None, AT)
    index = ActionIndex({entry.key: entry for entry in (CHECKOUT, pinned_v6)})
    assert index.entry_for(_use("actions/checkout@v6")) == CHECKOUT
    assert index.entry_for(_use("Actions/Checkout/sub@v6")) == CHECKOUT  # owner and repo without case
    assert index.entry_for(_use(f"actions/checkout@{B}", "v6.0.1")) == pinned_v6  # its own ref before a frozen tag
    assert index.entry_for(_use(f"actions/checkout@{A}", "v6.0.1")) == pinned_v6  # found; the commit differs
    assert index.entry_for(_use(f"actions/checkout@{A}")) == CHECKOUT  # no comment: by commit
    assert index.entry_for(_use(f"actions/checkout@{A}", "nightly")) == CHECKOUT
    assert index.entry_for(_use("actions/checkout@v5")) is None
    assert index.entry_for(_use(f"actions/setup-python@{A}")) is None
