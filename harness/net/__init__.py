"""The network: the URL guard and pinned, bounded HTTP."""
