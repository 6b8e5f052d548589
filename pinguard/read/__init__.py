"""Reading files: which ones a command reads and how (`files`), and every image reference under some paths (`paths`)."""
