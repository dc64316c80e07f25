"""`apt-get install ./balancenet_*.deb` on this machine, the tiny job from /usr/bin, and the package removed again."""
import os
import shutil
import subprocess
import tempfile
import unittest

from deb import deb_file
from installed import check_job, require_root, run

APT_ENV = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
# Waits for dpkg's lock rather than failing at once when another apt runs on the machine.
APT = ["apt-get", "-y", "-q", "-o", "DPkg::Lock::Timeout=120"]


class AptInstallTest(unittest.TestCase):
    def setUp(self):
        require_root()
        self.deb = deb_file(self)
        self.root = tempfile.mkdtemp(prefix="balancenet-apt-")
        # Always removed, also when the install or the job failed.
        self.addCleanup(shutil.rmtree, self.root, ignore_errors=True)
        self.addCleanup(subprocess.run, [*APT, "remove", "balancenet"], env=APT_ENV, stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL)

    def test_installs_runs_the_job_and_removes(self):
        # No network needed: every dependency is installed by scripts/setup.sh, so apt has nothing to fetch.
        rc, out = run([*APT, "install", os.path.abspath(self.deb)], env=APT_ENV, timeout=300)
        self.assertEqual(rc, 0, out)
        rc, out = run(["dpkg-query", "-W", "-f=${Status} ${Version}", "balancenet"])
        self.assertEqual(out, "install ok installed " + os.environ["BALANCENET_VERSION"])
        check_job(self, "/usr/bin/balancenet", os.path.join(self.root, "run"))
        rc, out = run([*APT, "remove", "balancenet"], env=APT_ENV, timeout=300)
        self.assertEqual(rc, 0, out)
        self.assertFalse(os.path.exists("/usr/bin/balancenet"))


if __name__ == "__main__":
    unittest.main()
