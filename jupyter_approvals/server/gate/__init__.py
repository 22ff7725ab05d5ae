"""The agent gate: who is an agent, what it may reach, and the holds at the effect."""
