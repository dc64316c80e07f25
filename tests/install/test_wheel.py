"""The wheel (scripts/wheel.sh): packed from this build in seconds, installed by pip into a fresh venv with the same
torch in seconds, it runs a launched job from that venv (its binaries find torch relative to where pip put them, and
the program runs scripts with the venv's Python); its metadata pins that torch. And pyproject.toml's settings are accepted by the newest release of its
build backend in the declared range, which refused them before anything was built when they were wrong."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import zipfile

from installed import BUILD_DIR, SOURCE_DIR, run

PYTHON = sys.executable  # the build's Python (.venv/), whose torch the wheel was built against


def docs_lines():
    """The commands of docs/python.md's wheel section, in order."""
    with open(os.path.join(SOURCE_DIR, "docs", "python.md")) as f:
        text = f.read()
    block = text.split("## In your own environment, on every host: one wheel", 1)[1].split("```sh\n", 1)[1]
    return [line for line in block.split("```", 1)[0].splitlines() if line.strip()]


def torch_version():
    from importlib.metadata import version
    return version("torch")


class WheelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="balancenet-wheel-")
        cls.addClassCleanup(shutil.rmtree, cls.root, ignore_errors=True)
        cls.dist = os.path.join(cls.root, "dist")
        started = time.monotonic()
        subprocess.run([os.path.join(SOURCE_DIR, "scripts", "wheel.sh")], check=True, stdout=subprocess.DEVNULL,
                       env=dict(os.environ, BUILD_DIR=BUILD_DIR, DIST_DIR=cls.dist, BALANCENET_PYTHON=PYTHON))
        cls.pack_seconds = time.monotonic() - started
        cls.wheel, = glob.glob(os.path.join(cls.dist, "balancenet-*.whl"))
        # A fresh venv with the same torch (uv links it from its cache, as scripts/setup.sh installs it).
        cls.venv = os.path.join(cls.root, "venv")
        subprocess.run(["/usr/bin/python3", "-m", "venv", cls.venv], check=True)
        uv = os.path.join(os.path.dirname(PYTHON), "uv")
        installer = [uv, "pip", "install", "-q", "--python", os.path.join(cls.venv, "bin", "python")] \
            if os.path.exists(uv) else [os.path.join(cls.venv, "bin", "pip"), "install", "-q"]
        subprocess.run([*installer, f"torch=={torch_version()}", "numpy"], check=True)

    def venv_bin(self, name):
        return os.path.join(self.venv, "bin", name)

    def test_the_wheel_names_and_pins_its_torch(self):
        self.assertLess(self.pack_seconds, 60, "packing the built tree should take seconds")
        version = torch_version()
        self.assertIn(f"+torch{version.replace('+', '.')}-", os.path.basename(self.wheel))
        with zipfile.ZipFile(self.wheel) as archive:
            metadata, = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
            self.assertIn(f"Requires-Dist: torch=={version}", archive.read(metadata).decode())
            names = archive.namelist()
        self.assertTrue(any(n.endswith(".data/scripts/balancenet") for n in names), names)
        self.assertTrue(any(n.startswith("balancenet/_engine") for n in names), names)

    def test_docs_install_lines_then_a_launched_job_from_the_venv(self):
        """docs/python.md's second and third lines as written, in the fresh venv (activated) from the source tree;
        the first, scripts/wheel.sh, is setUpClass's (into a folder of its own, then copied to dist/)."""
        lines = docs_lines()
        self.assertEqual(lines[0].split("#")[0].strip(), "scripts/wheel.sh")
        dist = os.path.join(SOURCE_DIR, "dist")
        os.makedirs(dist, exist_ok=True)
        for old in glob.glob(os.path.join(dist, "balancenet-*.whl")):
            os.remove(old)  # the glob of the docs' line must match this build's wheel alone
        shutil.copy2(self.wheel, dist)
        for line, limit in ((lines[1], 60), (lines[2], 300)):
            started = time.monotonic()
            rc, out = run(["bash", "-c", f". {self.venv}/bin/activate && {line}"], cwd=SOURCE_DIR, timeout=limit)
            self.assertEqual(rc, 0, f"{line}\n{out}")
            if line.startswith("pip install"):
                self.assertLess(time.monotonic() - started, 60, "installing the wheel should take seconds")
        self.assertIn("balancenet: done; results in", out)

    def test_the_installed_binaries_find_torch_relative_to_the_venv(self):
        subprocess.run([self.venv_bin("pip"), "install", "-q", "--disable-pip-version-check", "--force-reinstall",
                        "--no-deps", self.wheel], check=True)
        binaries = [self.venv_bin("balancenet"), *glob.glob(f"{self.venv}/lib/python3*/site-packages/balancenet/*.so")]
        self.assertGreaterEqual(len(binaries), 2)
        for binary in binaries:  # no path of the build's venv: the wheel works wherever pip puts it
            rpath = subprocess.run(["patchelf", "--print-rpath", binary], capture_output=True, text=True).stdout
            self.assertTrue(rpath.startswith("$ORIGIN/"), f"{binary}: {rpath}")
        rc, out = run([self.venv_bin("balancenet"), "--version"])
        self.assertEqual(rc, 0, out)

    def test_the_build_backend_accepts_pyproject(self):
        """scikit-build-core's PEP 517 hooks read and check every setting (the wheel's tag too) before a build."""
        metadata = os.path.join(self.root, "metadata")
        os.makedirs(metadata)
        rc, out = run([PYTHON, "-c", "import sys, scikit_build_core.build as b; "
                       "print(b.get_requires_for_build_wheel()); print(b.prepare_metadata_for_build_wheel(sys.argv[1]))",
                       metadata], cwd=SOURCE_DIR)
        self.assertEqual(rc, 0, out)
        self.assertIn("balancenet-0.1.0.dist-info", out)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
