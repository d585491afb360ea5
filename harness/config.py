"""The default models, in one place: the CLI, the library and the engine all fall back to these.

Kept free of imports so the CLI can name them without loading the SDK.
"""

JUDGE_MODEL = "claude-sonnet-5-5"
SCREEN_MODEL = "claude-haiku-5-5"  # bulk screening: the citation audit's support model
