#!/bin/sh
# A stand-in interpreter for the configure tests: FAKE_TORCH="" has no torch (import fails); otherwise it answers
# cmake/TorchFromPython.cmake's question as a torch of version FAKE_TORCH would.
[ -n "$FAKE_TORCH" ] || { echo "ModuleNotFoundError: No module named 'torch'" >&2; exit 1; }
printf '%s\n\n/nonexistent/share/cmake\n/nonexistent/torch\n1\n' "$FAKE_TORCH"
