"""Episode QA: a verdict ok | warn | redo with reasons, computed at every commit from what the episode holds."""
