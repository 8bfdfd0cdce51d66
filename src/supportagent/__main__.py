"""`python -m supportagent`: the same command line as the `supportagent` script."""

from supportagent.cli import main

main()
