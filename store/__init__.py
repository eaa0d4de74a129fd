"""loadtower.store"""
