"""Accounts: users, sessions and tokens, roles, and the login throttle."""
