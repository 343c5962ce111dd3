"""The agent's read path: the relevance gate (`gate`), memory text made safe for a prompt (`escape`), rows of
the reads as lines (`lines`) and the token-budgeted context block (`assemble`). `Memory.context` calls them."""
