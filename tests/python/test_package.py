"""The package around the module: info, the command line, and life without torch."""

import os
import subprocess
import sys

import myattn


def test_info():
    i = myattn.info()
    assert i["version"] == myattn.__version__
    assert i["isa"] in i["runnable_isas"] and "scalar" in i["runnable_isas"]
    assert set(i["runnable_isas"]) <= set(i["compiled_isas"]) | {"scalar"}
    assert i["precisions"] == ["f32", "int8", "bf16"] and i["isa_reason"]


def python(*args, env=None):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env={**os.environ, **(env or {})})


def test_python_m_myattn_info():
    r = python("-m", "myattn", "info")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"myattn {myattn.__version__}\n") and "active isa:" in r.stdout


def test_python_m_myattn_bench_without_torch():
    # torch made unimportable: the package and the bench work with NumPy alone.
    code = "import sys, runpy; sys.modules['torch'] = None; sys.argv = ['myattn'] + sys.argv[1:]; " \
           "runpy.run_module('myattn', run_name='__main__')"
    r = python("-c", code, "bench", "--cases", "S/1,S/3", "--rounds", "1", "--round-ms", "1", "--cpu-time")
    assert r.returncode == 0, r.stderr
    assert "torch is not installed" in r.stdout and "timed: this thread's CPU time" in r.stdout
    timed = [line.split("  ")[1].strip() for line in r.stdout.splitlines() if "us/call" in line]
    assert timed == ["myattn, NumPy arrays", "myattn, NumPy, out=", "C++ loop"] * 2


def test_python_m_myattn_usage():
    r = python("-m", "myattn", "nonsense")
    assert r.returncode == 2 and "invalid choice" in r.stderr
