"""Text handling: decoding untrusted bytes, showing untrusted text safely."""
