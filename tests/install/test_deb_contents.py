"""The .deb's control fields and file list, as dpkg-deb reads them."""
import os
import re
import unittest

from deb import deb_file
from installed import run


class DebContentsTest(unittest.TestCase):
    def setUp(self):
        self.deb = deb_file(self)

    def field(self, name):
        """A control field as `dpkg-deb -I` shows it (one line each in our control file)."""
        rc, out = run(["dpkg-deb", "-I", self.deb])
        self.assertEqual(rc, 0, out)
        found = re.search(rf"^ {name}: (.*)$", out, re.MULTILINE)
        self.assertIsNotNone(found, f"no {name} in\n{out}")
        return found.group(1).strip()

    def test_name_and_version_from_the_project(self):
        self.assertEqual(self.field("Package"), "balancenet")
        self.assertEqual(self.field("Version"), os.environ["BALANCENET_VERSION"])
        self.assertTrue(os.path.basename(self.deb).startswith(f"balancenet_{os.environ['BALANCENET_VERSION']}_"))

    def test_depends_on_debians_libraries_not_on_debians_torch(self):
        depends = [d.strip() for d in self.field("Depends").split(",")]
        names = {re.split(r"[ (]", d)[0] for d in depends}
        # dpkg-shlibdeps' share: the linked libraries' Debian packages, with versions.
        self.assertIn("libc6", names, depends)
        self.assertTrue(any(n.startswith("libyaml-cpp") for n in names), depends)
        self.assertIn("python3", names, depends)
        # torch is the wheel the program was built against (its RPATH), never Debian's 1.13 or its Gloo.
        self.assertFalse([n for n in names if "torch" in n or "gloo" in n or "openblas" in n], depends)
        self.assertEqual(self.field("Recommends"), "dataset-fashion-mnist")

    def test_lists_the_program_package_docs_and_examples(self):
        rc, out = run(["dpkg-deb", "-c", self.deb])
        self.assertEqual(rc, 0, out)
        files = {line.split()[-1].lstrip(".") for line in out.splitlines()}
        for path in ["/usr/bin/balancenet", "/usr/lib/python3/dist-packages/balancenet/torch.py",
                     "/usr/share/doc/balancenet/README.md", "/usr/share/doc/balancenet/docs/usage.md",
                     "/usr/share/doc/balancenet/examples/common.sh"]:
            self.assertIn(path, files)
        self.assertTrue(any(re.search(r"/balancenet/_engine\..*\.so$", f) for f in files), "the Python extension")
        self.assertFalse([f for f in files if not f.startswith("/usr/")], "only under /usr")


if __name__ == "__main__":
    unittest.main()
