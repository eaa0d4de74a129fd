"""Built-in scenario files."""
