"""Writing files: span edits (`edits`), the pins a lock asks for (`plan`), many files at once or none
(`commit`, with its `journal`), and one file atomically (`atomic`)."""
