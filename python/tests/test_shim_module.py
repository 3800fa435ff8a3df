# SPDX-License-Identifier: Apache-2.0
"""rmm.shim and rmm.run: where the package's shim and commands are, the environment that preloads
the shim, and the command line `python -m rmm.run` makes. An installed package (the wheel) carries
the shim and the commands; one built in a source tree does not, and says so."""

import os
import sys

import pytest

import rmm.run
import rmm.shim

CARRIES_TOOLS = os.path.isdir(os.path.join(os.path.dirname(rmm.shim.__file__), "lib"))


def test_the_shim_is_the_packages_or_its_absence_is_explained():
    if CARRIES_TOOLS:
        path = rmm.shim.library_path()
        assert path.endswith(os.path.join("rmm", "lib", "librmm_shim.so")) and os.path.isfile(path)
        for name in rmm.shim.COMMANDS:
            assert os.access(rmm.shim.command_path(name), os.X_OK)
    else:
        with pytest.raises(FileNotFoundError, match="librmm_shim.so is not in this rmm package"):
            rmm.shim.library_path()
        with pytest.raises(FileNotFoundError, match="rmm-run is not in this rmm package"):
            rmm.shim.command_path("rmm-run")


def test_an_unknown_command_is_refused():
    with pytest.raises(ValueError, match="'rmm-frobnicate' is not a command of the package; expected one of rmm-run"):
        rmm.shim.command_path("rmm-frobnicate")


@pytest.mark.skipif(not CARRIES_TOOLS, reason="a package built in a source tree carries no shim (checked above)")
def test_the_environment_preloads_the_shim_first_after_a_sanitizer(tmp_path):
    shim = rmm.shim.library_path()
    env = rmm.shim.environment({"LD_PRELOAD": "/x/libother.so /y/libasan.so.8:/old/librmm_shim.so", "KEEP": "1"})
    assert env["LD_PRELOAD"] == f"/y/libasan.so.8:{shim}:/x/libother.so"
    assert env["KEEP"] == "1"
    assert "RMM_CONFIG" not in env
    config = tmp_path / "stack.toml"
    config.write_text('[[resource]]\ntype = "cuda"\n')
    assert rmm.shim.environment({}, config=config)["RMM_CONFIG"] == str(config)
    with pytest.raises(FileNotFoundError, match="the configuration file .*missing.toml does not exist"):
        rmm.shim.environment({}, config=tmp_path / "missing.toml")


@pytest.mark.skipif(not CARRIES_TOOLS, reason="a package built in a source tree carries no rmm-run (checked above)")
def test_python_dash_m_rmm_run_makes_rmm_runs_command_line():
    run = rmm.shim.command_path("rmm-run")
    assert rmm.run.command_line(["train.py", "--epochs", "3"]) == [run, "--", sys.executable, "train.py", "--epochs", "3"]
    assert rmm.run.command_line(["--report", "--pool-size", "1GiB", "--", "train.py"]) == [
        run,
        "--report",
        "--pool-size",
        "1GiB",
        "--",
        sys.executable,
        "train.py",
    ]
    with pytest.raises(SystemExit, match="usage: python -m rmm.run"):
        rmm.run.command_line(["--report", "--"])
