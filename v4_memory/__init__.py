"""Chapter 4: an agent that remembers, across restarts (sessions) and across weeks (memory)."""
