"""Readers of submission file formats (a ``.py`` file, a Jupyter notebook)."""
