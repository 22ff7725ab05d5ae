"""The REST handlers of the extension (docs/protocol.md 6)."""
