"""`lab`: the one command of the graph-retrieval lab. The dispatcher sits above every stage; each
stage declares its own subcommands (docs/cli.md)."""
