"""loadtower.tui.screens"""
