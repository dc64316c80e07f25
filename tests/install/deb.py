"""The .deb the fixture (install.package, scripts/package.sh) made for this build."""
import glob
import os


def deb_file(test):
    found = glob.glob(os.path.join(os.environ["BALANCENET_DEB_DIR"], "balancenet_*.deb"))
    test.assertEqual(len(found), 1, f"one package expected, found {found}")
    return found[0]
