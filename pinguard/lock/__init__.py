"""The lockfile: its format (`lockfile`), one writer at a time (`exclusive`), bringing it in line with
what the files reference (`sync`), checking it against registries (`verify`), and what a rebuild changed (`explain`)."""
