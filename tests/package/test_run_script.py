"""The `run` script, run on a copy of itself with stand-in Pythons (shell scripts), so nothing is downloaded: a
wrong or failing Python stops with what to do and leaves nothing stamped ready, the next good run recovers, and
what follows the versions goes to pytest."""

import hashlib
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A stand-in interpreter: reports its version, makes venvs whose python logs its arguments, and fails
# `pip install` when FAIL_PIP is set.
FAKE_PYTHON = """#!/usr/bin/env bash
if [ "$1" = -c ]; then echo "{version}"; exit 0; fi
if [ "$1 $2" = "-m venv" ]; then
  mkdir -p "$3/bin"
  cat > "$3/bin/python" <<'EOF'
#!/usr/bin/env bash
if [ "$1 $2 $3" = "-m pip install" ]; then
  [ -z "${{FAIL_PIP:-}}" ] || {{ echo "pip: no bpy for you" >&2; exit 1; }}
  exit 0
fi
echo "python $*"
EOF
  chmod +x "$3/bin/python"
  exit 0
fi
exit 3
"""


def checkout(tmp_path, version="3.11"):
    """A copy of `run` and requirements.txt, and a stand-in Python reporting `version`."""
    for name in ("run", "requirements.txt"):
        shutil.copy2(ROOT / name, tmp_path / name)
    python = tmp_path / "fake-python"
    python.write_text(FAKE_PYTHON.format(version=version))
    python.chmod(0o755)
    return python


def run(tmp_path, *args, **env):
    return subprocess.run([str(tmp_path / "run"), *args], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", **env})


def stamp(version):
    digest = hashlib.sha1((ROOT / "requirements.txt").read_bytes()).hexdigest()[:12]
    return f".ready-{version}-{digest}"


def test_another_python_stops_with_what_to_do_and_makes_no_venv(tmp_path):
    python = checkout(tmp_path, version="3.12")
    for args, bpy in ((["demo"], "4.5.15"), (["build"], "4.5.15"), (["test"], "4.2.23"), (["test", "5.0"], "5.0.1")):
        result = run(tmp_path, *args, PYTHON=str(python))
        assert result.returncode == 2
        assert f"bpy {bpy} needs Python 3.11" in result.stderr and "set PYTHON=/path/to/python3.11" in result.stderr
    assert not (tmp_path / ".venv").exists()


def test_a_missing_python_says_so_for_demo_and_build(tmp_path):
    checkout(tmp_path)
    for command in ("demo", "build"):
        result = run(tmp_path, command, PYTHON="no-such-python3.11")
        assert result.returncode == 2 and "command not found" not in result.stderr
        assert "no-such-python3.11 not found" in result.stderr and "PYTHON=" in result.stderr


def test_a_python_that_does_not_run_says_what_to_do(tmp_path):
    """A python on the PATH that fails when run (a pyenv shim for a version not selected) stops with the advice."""
    checkout(tmp_path)
    shim = tmp_path / "python3.12"
    shim.write_text("#!/usr/bin/env bash\necho 'pyenv: python3.12: command not found' >&2\nexit 127\n")
    shim.chmod(0o755)
    result = run(tmp_path, "demo", PYTHON=str(shim))
    assert result.returncode == 2 and "did not run" in result.stderr and "PYTHON=/path/to/python3.11" in result.stderr
    assert not (tmp_path / ".venv").exists()


def test_a_failed_set_up_is_not_stamped_ready_and_the_next_run_recovers(tmp_path):
    python = checkout(tmp_path)
    failed = run(tmp_path, "test", "4.5", PYTHON=str(python), FAIL_PIP="1")
    assert failed.returncode == 1
    assert "pip: no bpy for you" in failed.stderr and "run again once that is fixed" in failed.stderr
    assert not (tmp_path / ".venv" / "bpy-4.5").exists(), "nothing half made is left"
    again = run(tmp_path, "test", "4.5", "-k", "ik", PYTHON=str(python))
    assert (tmp_path / ".venv" / "bpy-4.5" / stamp("4.5.15")).exists()
    assert "python -m pytest -q -p no:cacheprovider -k ik" in again.stdout


def test_what_follows_the_versions_goes_to_pytest(tmp_path):
    python = checkout(tmp_path)
    result = run(tmp_path, "test", "4.2", "5.0", "tests/blender/test_rig2d.py", "-k", "ik", PYTHON=str(python))
    calls = [line for line in result.stdout.splitlines() if line.startswith("python ")]
    assert calls == ["python -m pytest -q -p no:cacheprovider tests/blender/test_rig2d.py -k ik"] * 2
    core = run(tmp_path, "test", "core", "-k", "contour", PYTHON=str(python))
    assert "python -m pytest -q -p no:cacheprovider tests/core -k contour" in core.stdout
    quiet = run(tmp_path, "test", "4.5", "-q", PYTHON=str(python))  # one -q: pytest's -qq prints no count
    assert "python -m pytest -p no:cacheprovider -q" in quiet.stdout
    unknown = run(tmp_path, "test", "4.4", PYTHON=str(python))
    assert unknown.returncode == 2 and "unknown Blender version '4.4'" in unknown.stderr


def test_no_or_an_unknown_command_prints_the_usage(tmp_path):
    checkout(tmp_path)
    for args in ((), ("frobnicate",)):
        result = run(tmp_path, *args)
        out = result.stdout + result.stderr
        assert result.returncode == 2 and out.count("usage: ./run COMMAND") == 1
        assert "set -euo" not in out and ("unknown command 'frobnicate'" in out) == bool(args)
