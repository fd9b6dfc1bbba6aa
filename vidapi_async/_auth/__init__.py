"""Tokens: the providers (OAuth, a static token, API v2's key) and the login kept
on disk."""
