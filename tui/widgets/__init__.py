"""Widgets of the loadtower TUI."""
