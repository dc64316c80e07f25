"""`cmake --install` into a fresh prefix, then the program and its Python package run from there alone."""
import os
import shutil
import subprocess
import tempfile
import unittest

from installed import BUILD_DIR, SOURCE_DIR, TORCH_ENV, check_job, hidden, require_root, run


class InstalledPrefixTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_root()
        cls.root = tempfile.mkdtemp(prefix="balancenet-install-")
        cls.addClassCleanup(shutil.rmtree, cls.root, ignore_errors=True)  # also when the install fails
        cls.prefix = os.path.join(cls.root, "prefix")
        subprocess.run([os.environ["CMAKE_COMMAND"], "--install", BUILD_DIR, "--prefix", cls.prefix],
                       check=True, stdout=subprocess.DEVNULL)

    def program(self):
        return os.path.join(self.prefix, "bin", "balancenet")

    def test_installs_the_program_package_docs_and_examples(self):
        for path in ["bin/balancenet", "lib/python3/dist-packages/balancenet/torch.py",
                     "share/doc/balancenet/README.md", "share/doc/balancenet/docs/usage.md",
                     "share/doc/balancenet/examples/common.sh"]:
            self.assertTrue(os.path.isfile(os.path.join(self.prefix, path)), path)
        self.assertTrue(os.access(os.path.join(self.prefix, "share/doc/balancenet/examples/imagefolder.sh"), os.X_OK))

    def test_no_build_or_source_path_is_compiled_in(self):
        package = os.path.join(self.prefix, "lib/python3/dist-packages/balancenet")
        binaries = [self.program()] + [os.path.join(package, n) for n in os.listdir(package) if n.endswith(".so")]
        self.assertEqual(len(binaries), 2)
        for binary in binaries:
            with open(binary, "rb") as f:  # the torch environment's path is the RPATH: allowed
                content = f.read().replace(TORCH_ENV.encode(), b"")
            for tree in {BUILD_DIR, SOURCE_DIR, os.path.realpath(BUILD_DIR), os.path.realpath(SOURCE_DIR)}:
                self.assertNotIn(tree.encode(), content, f"{binary} names {tree}")

    def test_version_with_the_trees_hidden(self):
        rc, out = run(hidden([self.program(), "--version"]))
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"^balancenet \d+\.\d+\.\d+")

    def test_two_worker_job_with_the_trees_hidden(self):
        check_job(self, self.program(), os.path.join(self.root, "run"))

    def test_launch_puts_the_installed_package_on_pythonpath(self):
        script = os.path.join(self.root, "where.py")
        with open(script, "w") as f:
            f.write("import balancenet.torch, os; print('package at', os.path.dirname(balancenet.torch.__file__))\n")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        rc, out = run(hidden([self.program(), "launch", "--workers", "1", script]), env=env)
        self.assertEqual(rc, 0, out)
        self.assertIn("package at " + os.path.join(self.prefix, "lib/python3/dist-packages/balancenet"), out)


if __name__ == "__main__":
    unittest.main()
