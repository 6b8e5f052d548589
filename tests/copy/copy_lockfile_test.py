"""`copies` in the lockfile: written, read back equal, and refused where malformed, with the entry named."""
from __future__ import annotations

import pytest

from pinguard.lock.lockfile import Copy, Lock, LockEntry, LockfileError, dumps, loads

RAY = "public.ecr.aws/deep-learning-containers/ray"
ECR = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
DIGEST, AMD64 = "sha256:" + "a" * 64, "sha256:" + "b" * 64


def entry(*copies: Copy) -> LockEntry:
    return LockEntry(name=RAY, tag="train-ml-cuda-v1.1", digest=DIGEST,
                     media_type="application/vnd.oci.image.index.v1+json", size=1609, tag_kind="moving",
                     frozen_tag=None, resolved_at="2026-11-30T05:00:00Z", platforms={"linux/amd64": AMD64},
                     copies=copies)


def text_with(copies: str) -> str:
    return dumps(Lock().with_entries([entry()])) + copies


def test_copies_are_written_sorted_and_read_back_equal() -> None:
    copies = (Copy(f"{ECR}/mirror/deep-learning-containers/ray", "2026-12-01T10:00:00Z"),
              Copy("localhost:5000/deep-learning-containers/ray", "2026-12-01T09:00:00Z"))
    text = dumps(Lock().with_entries([entry(*copies)]))
    assert text.endswith(
        "copies = [\n"
        f'  {{ to = "{ECR}/mirror/deep-learning-containers/ray", at = "2026-12-01T10:00:00Z" }},\n'
        '  { to = "localhost:5000/deep-learning-containers/ray", at = "2026-12-01T09:00:00Z" },\n'
        "]\n")
    read = loads(text).get(RAY, "train-ml-cuda-v1.1")
    assert read == entry(*reversed(copies))  # the order given does not matter: both read as written
    assert dumps(loads(text)) == text


def test_an_entry_without_copies_writes_no_key() -> None:
    assert "copies" not in dumps(Lock().with_entries([entry()]))
    assert loads(dumps(Lock().with_entries([entry()]))).get(RAY, "train-ml-cuda-v1.1") == entry()


@pytest.mark.parametrize(("copies", "message"), [
    ('copies = "x"\n', "copies: expected an array, got a string"),
    ("copies = [1]\n", "copies[0]: expected a table, got an integer"),
    ('copies = [{ to = "localhost:5000/a" }]\n', "copies[0]: missing key `at`"),
    ('copies = [{ to = "localhost:5000/a", at = 3 }]\n', "copies[0]: at: expected a string, got an integer"),
    ('copies = [{ to = "localhost:5000/a", at = "t", by = "me" }]\n', "copies[0]: unknown key `by`"),
    ('copies = [{ to = "ray", at = "t" }]\n', "'ray' is not a repository's full name"),
    ('copies = [{ to = "localhost:5000/a:v1", at = "t" }]\n', "'localhost:5000/a:v1' is not a repository's full name"),
    ('copies = [{ to = "localhost:5000/a", at = "" }]\n', "`at` is empty"),
    ('copies = [{ to = "localhost:5000/a", at = "t" }, { to = "localhost:5000/a", at = "u" }]\n',
     "the same `to` twice"),
])
def test_malformed_copies_are_refused_naming_the_entry(copies: str, message: str) -> None:
    with pytest.raises(LockfileError) as raised:
        loads(text_with(copies), "pinguard.lock")
    assert str(raised.value).startswith(f"pinguard.lock:4:1: [[image]] #1 ({RAY}:train-ml-cuda-v1.1): ")
    assert message in str(raised.value)


def test_one_copy_recorded_for_two_images_is_refused_naming_both() -> None:
    shared = f'copies = [\n  {{ to = "{ECR}/mirror/ray", at = "2026-12-01T10:00:00Z" }},\n]\n'
    other = text_with(shared).replace(RAY, "ghcr.io/acme/ray").partition("version = 1\n")[2]
    with pytest.raises(LockfileError) as raised:
        loads(text_with(shared) + other, "deploy/pinguard.lock")
    assert str(raised.value) == (
        f"deploy/pinguard.lock: {RAY}:train-ml-cuda-v1.1 records a copy at {ECR}/mirror/ray:train-ml-cuda-v1.1, "
        "which is ghcr.io/acme/ray:train-ml-cuda-v1.1's copy: two images cannot share one name; remove that copy "
        "and copy again keeping each source registry in the path (`pinguard copy --keep-registry`)")
