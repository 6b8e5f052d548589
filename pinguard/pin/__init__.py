"""Pinning: the new text of every file the lock pins (`plan`), and moving moved tags forward (`update`)."""
