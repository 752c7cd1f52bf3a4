"""``python -m privgraph``: the command line."""

from privgraph.cli import main

main()
