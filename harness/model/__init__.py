"""Model access: Anthropic client construction, record and replay.

Importing this package does not import the anthropic SDK; its modules do.
"""
