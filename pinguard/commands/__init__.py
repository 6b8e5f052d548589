"""One module per subcommand, named as typed, declaring its `COMMAND` (`context.Command`) and exporting a function
of the same name that returns the exit status. What they share: `options` and `context` (what the command line
hands them), `flags`, `reporter`, `transaction`."""
