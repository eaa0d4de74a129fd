"""loadtower.store.commands"""
