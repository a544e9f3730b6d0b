"""Chapter 2: the agent writes a plan as a todo list and keeps it up to date."""
