"""One module per subcommand; each exports a function of the same name returning the exit status."""
