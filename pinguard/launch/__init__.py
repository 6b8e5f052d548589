"""Launching the training job against the locked image, and confirming what ran.

`gate` holds the manifest to `check`'s standard, `render` turns it into the object the
API receives, `cluster` submits and watches that through the `kubernetes` client,
`pods` judges what pods report against the lock, `local` runs the entrypoint here for
`--local`, and `guards` runs inside the job itself. `check` and `pin` import none of it.
"""
from __future__ import annotations
