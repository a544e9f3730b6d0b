"""Chapter 3: the agent delegates subtasks to child agents with fresh contexts."""
