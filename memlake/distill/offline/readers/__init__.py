"""The rule readers: one module per family, each named for what it reads; `distiller` runs them."""
