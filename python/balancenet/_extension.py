"""Imports the compiled engine and checks that it was built against the torch imported here."""
import torch

try:
    from . import _engine
except ImportError as error:  # a libtorch of another build: missing or mismatched symbols
    raise ImportError(
        f"balancenet's engine cannot be loaded into this Python ({error}); it is built for Debian's python3 and "
        f"its python3-torch (torch {torch.__version__} is imported here from {torch.__file__})") from None


def _release(version):
    """'1.13.0a0+git' -> (1, 13, 0)"""
    parts = []
    for part in version.split("+")[0].split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit()) if not part.isdigit() else part
        parts.append(int(digits or 0))
    return tuple(parts)


if _release(torch.__version__) != _release(_engine.TORCH_VERSION):
    raise ImportError(
        f"balancenet was built against libtorch {_engine.TORCH_VERSION}, but this Python imports torch "
        f"{torch.__version__} from {torch.__file__}: use Debian's /usr/bin/python3 with python3-torch, the same build")
