"""Text: decoding, HTML and PDF to text (documents), strict JSON, untrusted wrapping,
and showing untrusted text safely on a terminal."""
