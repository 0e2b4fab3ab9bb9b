"""The judge observatory: candidate judges scored against the readers' reference."""
