"""One module per kind of file, each finding the image references in it with their exact spans.

Each source module exports `SOURCE` (its kind's name) and `find(path, text, settings) -> Searched`
(`base.py`); `kinds.py` says which kind a file is and calls its source.
"""
