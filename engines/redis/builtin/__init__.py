"""What Redis adds to loadtower's built-in files (scenarios/builtin_additions.py)."""
