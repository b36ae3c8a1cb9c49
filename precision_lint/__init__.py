"""precision-lint: numerical-precision hazards in PyTorch code."""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("precision-lint")
except PackageNotFoundError:  # running from a source tree without install
    __version__ = "0.0.0"
