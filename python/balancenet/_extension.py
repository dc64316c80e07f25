"""Imports the compiled engine and checks that it was built against the torch imported here."""
import torch

try:
    from . import _engine
except ImportError as error:  # a libtorch of another build: missing or mismatched symbols
    raise ImportError(
        f"balancenet's engine cannot be loaded into this Python ({error}); torch {torch.__version__} is imported "
        f"here from {torch.__file__}: rebuild balancenet against this torch (pip install --no-build-isolation .)"
    ) from None


def _release(version):
    """'2.11.0+cu130' -> (2, 11, 0)"""
    parts = []
    for part in version.split("+")[0].split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit()) if not part.isdigit() else part
        parts.append(int(digits or 0))
    return tuple(parts)


def _variant(cuda):
    return f"CUDA {cuda}" if cuda else "CPU-only"


if _release(torch.__version__) != _release(_engine.TORCH_VERSION):
    raise ImportError(
        f"balancenet was built against torch {_engine.TORCH_VERSION}, but this Python imports torch "
        f"{torch.__version__} from {torch.__file__}: rebuild balancenet against this torch "
        f"(pip install --no-build-isolation .), or use the Python it was built for")
if bool(torch.version.cuda) != bool(_engine.TORCH_CUDA):
    raise ImportError(
        f"balancenet was built against a {_variant(_engine.TORCH_CUDA)} torch, but this Python imports a "
        f"{_variant(torch.version.cuda)} torch {torch.__version__} from {torch.__file__}: rebuild balancenet "
        f"against this torch (pip install --no-build-isolation .)")
