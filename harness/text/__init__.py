"""Text: decoding, HTML and PDF to text, strict JSON, untrusted wrapping."""
