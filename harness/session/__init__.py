"""A session folder: its input models, the loader, the stored sources and `show`."""
