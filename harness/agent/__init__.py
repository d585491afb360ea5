"""The agent's tools: path scoping, Read, URL guarding and WebFetch (no model client here)."""
