"""One module per subcommand, each with `register(subparsers)`; the CLI lists them here."""
