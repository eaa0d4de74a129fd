"""loadtower.scenarios"""
