"""Reading: which files a command reads and how (`files`), and what a tool it runs writes, bounded (`tool`)."""
