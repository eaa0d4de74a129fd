"""loadtower.agents"""
