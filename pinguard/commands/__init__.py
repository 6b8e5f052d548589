"""One module per subcommand, each exporting a function of the same name that returns the exit status; `options`
holds what the command line hands them all."""
