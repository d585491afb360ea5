"""Text: every rule that turns bytes into text (decoding, HTML, PDF, documents)."""
