"""The big real tree the search benchmarks use: Django, sympy, numpy and scipy, unpacked.

The wheels are fetched once with ``pip download --no-deps`` into
``$IKIGAI_BENCH_CACHE`` (default ``~/.cache/ikigai-bench``) and unpacked side by side into
one git repository (``git init``, no commit) with a Python ``.gitignore`` of about a hundred
rules, as a checkout would have: about 320 MB in 7,600 files. Building it takes a minute once;
later runs reuse it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

WHEELS = ("Django==5.1", "sympy==1.13.3", "numpy==2.1.3", "scipy==1.14.1")
CACHE = Path(os.environ.get("IKIGAI_BENCH_CACHE", Path.home() / ".cache" / "ikigai-bench"))
# A typical Python project's ignore file (the kind numpy's has), so every path is tested
# against real rules; none of them hides the sources searched.
GITIGNORE = """\
# Byte-compiled / optimized / DLL files
__pycache__/
*.py[cod]
*$py.class
*.o
*.a
*.obj
*.lib
*.exp
*.dll
*.dylib
*~
*.swp
*.swo
*.bak
*.orig
*.rej
.#*
\\#*#
# Distribution / packaging
/build/
/build-install/
/dist/
/develop-eggs/
/downloads/
/eggs/
/.eggs/
/lib64/
/parts/
/sdist/
/var/
/wheels/
/share/python-wheels/
*.egg-info/
.installed.cfg
*.egg
MANIFEST
pip-log.txt
pip-delete-this-directory.txt
# Unit test / coverage reports
htmlcov/
.tox/
.nox/
.coverage
.coverage.*
.cache
nosetests.xml
coverage.xml
*.cover
*.py,cover
.hypothesis/
.pytest_cache/
cover/
# Translations and docs
*.mo.tmp
docs/_build/
doc/_build/
doc/build/
doc/source/generated/
doc/source/reference/generated/
doc/cdoc/build
/site
# Environments
.env
.venv
env/
venv/
ENV/
env.bak/
venv.bak/
.python-version
# Editors and tools
.idea/
.vscode/
*.sublime-project
*.sublime-workspace
.spyderproject
.spyproject
.ropeproject
.mypy_cache/
.dmypy.json
dmypy.json
.pyre/
.pytype/
cython_debug/
.ipynb_checkpoints
profile_default/
ipython_config.py
# Generated sources
*.pyx.c
*.pxd.c
*_wrappermodule.c
*-f2pywrappers.f
*-f2pywrappers2.f90
/numpy/_core/include/numpy/config.h
/numpy/_core/include/numpy/_numpyconfig.h
/numpy/_core/src/multiarray/_multiarray_tests.c
/numpy/_core/src/umath/_umath_tests.c
/scipy/__config__.py
/scipy/version.py
/benchmarks/env
/benchmarks/results
/benchmarks/html
!numpy/_core/include/numpy/*.h
# OS files
.DS_Store
Thumbs.db
"""


def tree() -> Path:
    """The unpacked tree, built on first use; the benchmark stops in one line if it cannot."""
    root = CACHE / "tree"
    done = root / ".built"
    if done.exists():
        return root
    wheels = CACHE / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    have = list(wheels.glob("*.whl"))
    if len(have) < len(WHEELS):
        print(f"downloading {', '.join(WHEELS)} into {wheels} (once)", flush=True)
        ran = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                              "--only-binary", ":all:", "-q", "-d", str(wheels), *WHEELS])
        if ran.returncode != 0:
            raise SystemExit("benchmark stopped: pip download of the tree's wheels failed")
        have = list(wheels.glob("*.whl"))
    print(f"unpacking {len(have)} wheels into {root} (once)", flush=True)
    root.mkdir(parents=True, exist_ok=True)
    for wheel in sorted(have):
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(root)
    (root / ".gitignore").write_text(GITIGNORE)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    done.touch()
    return root
