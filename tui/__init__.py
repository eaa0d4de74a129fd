"""loadtower.tui"""
