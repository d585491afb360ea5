"""Text: decoding, HTML and PDF to text (documents), strict JSON, untrusted wrapping."""
