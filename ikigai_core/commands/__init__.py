"""The CLI's commands, one module per group of related commands."""
