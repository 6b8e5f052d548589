"""pinguard: pin container images to verified digests."""
from __future__ import annotations

__version__ = "0.1.0"
