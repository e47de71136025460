"""Entry points and the command adapter: the command line, the commands it dispatches, the GitHub Action."""
