#!/usr/bin/env python3
"""Lays out what `cmake --install` put under PREFIX as a wheel for the Python running this (scripts/wheel.sh): the
package at the wheel's root, the program as a script (pip puts it into the venv's bin/), the CUDA plugin beside the
extension and under the venv's lib/balancenet/ (where the program looks), each binary finding torch's libraries
relative to where pip installs it; the metadata pins the exact torch it was built against."""
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from importlib.metadata import version

from wheel.wheelfile import WheelFile

PURELIB = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"


def metadata(name, release, torch, summary, requires_python):
    return "\n".join(["Metadata-Version: 2.1", f"Name: {name}", f"Version: {release}", f"Summary: {summary}",
                      f"Requires-Python: {requires_python}", f"Requires-Dist: torch=={torch}", ""])


def wheel_file(tag):
    return "\n".join(["Wheel-Version: 1.0", "Generator: balancenet scripts/make_wheel.py", "Root-Is-Purelib: false",
                      f"Tag: {tag}", ""])


def set_rpath(path, rpath):
    subprocess.run(["patchelf", "--set-rpath", rpath, path], check=True)


def main(prefix, dist):
    project = tomllib.load(open("pyproject.toml", "rb"))["project"]
    torch = version("torch")
    # The torch it needs, in the version's local part: wheels for two torches of one release do not collide.
    release = f"{project['version']}+torch{torch.replace('+', '.')}"
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"
    tag = f"{python}-{python}-{sysconfig.get_platform().replace('-', '_').replace('.', '_')}"
    name = project["name"]
    tree = os.path.join(prefix, "wheel")
    data = os.path.join(tree, f"{name}-{release}.data")
    package = os.path.join(tree, "balancenet")
    shutil.copytree(os.path.join(prefix, "lib", "python3", "dist-packages", "balancenet"), package)
    os.makedirs(os.path.join(data, "scripts"))
    program = os.path.join(data, "scripts", "balancenet")
    shutil.copy2(os.path.join(prefix, "bin", "balancenet"), program)
    # <venv>/bin/balancenet and <site-packages>/balancenet/*.so: torch sits in <site-packages>/torch/lib.
    set_rpath(program, f"$ORIGIN/../{PURELIB}/torch/lib")
    binaries = [os.path.join(package, f) for f in os.listdir(package) if f.endswith(".so")]
    plugin = os.path.join(prefix, "lib", "balancenet", "libbalancenet_cuda.so")
    if os.path.exists(plugin):
        shutil.copy2(plugin, package)
        binaries.append(os.path.join(package, os.path.basename(plugin)))
        os.makedirs(os.path.join(data, "data", "lib", "balancenet"))
        beside_program = os.path.join(data, "data", "lib", "balancenet", os.path.basename(plugin))
        shutil.copy2(plugin, beside_program)
        set_rpath(beside_program, f"$ORIGIN/../../{PURELIB}/torch/lib")
    for binary in binaries:
        set_rpath(binary, "$ORIGIN/../torch/lib")
    info = os.path.join(tree, f"{name}-{release}.dist-info")
    os.makedirs(info)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write(metadata(name, release, torch, project["description"], project["requires-python"]))
    with open(os.path.join(info, "WHEEL"), "w") as f:
        f.write(wheel_file(tag))
    filename = f"{name}-{release}-{tag}.whl"
    # Whole or not at all: written beside, then renamed (a wheel cut short would install half a package).
    partial = os.path.join(dist, f".partial-{os.getpid()}")
    os.makedirs(partial)
    try:
        with WheelFile(os.path.join(partial, filename), "w") as archive:
            archive.write_files(tree)
        os.replace(os.path.join(partial, filename), os.path.join(dist, filename))
    finally:
        shutil.rmtree(partial)
    print(os.path.join(dist, filename))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
