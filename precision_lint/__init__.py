"""precision-lint: numerical-precision hazards in PyTorch code."""

# The same as pyproject.toml's (tests/test_speed.py checks it): asking the installed
# metadata (importlib.metadata) costs more than the whole of `--version` may.
__version__ = "0.1.0"
