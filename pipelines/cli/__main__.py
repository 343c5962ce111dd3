"""`python -m pipelines.cli`: errors as one line, as the `memlake` script gives them."""

from pipelines.cli import main

main()
