"""Dagster assets, one module per layer; each module exposes ASSETS and CHECKS."""
