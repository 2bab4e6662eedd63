"""The magics in a real IPython shell."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")


@pytest.fixture
def ip(port_shell):
    yield port_shell
    port_shell.run_line_magic("port", "off")


def run(ip, source):
    return ip.run_cell(source, store_history=True)


def test_port_cell_binds_port_with_a_calls_dataframe(ip):
    result = run(
        ip,
        "%%port\nimport torch\nx = torch.ones(3, 4)\ny = x.sum(1)\n",
    )
    assert result.success
    port = ip.user_ns["_port"]
    calls = port.calls
    assert {"name", "line", "status", "suggestion", "devices_in", "device_out", "count"} <= set(
        calls.columns
    )
    row = calls[calls["name"] == "Tensor.sum"].iloc[0]
    assert row["status"] == "non_standard"
    assert row["line"] == 3
    entry = json.loads(port.to_json())
    assert entry["source"].startswith("import torch")
    assert entry["calls"][0]["name"]
    assert torch.equal(ip.user_ns["y"], torch.full((3,), 4.0))


def test_the_cell_output_carries_html_plain_and_porter_json(ip):
    run(ip, "%%port\nimport numpy as np\na = np.concatenate([np.ones(2), np.ones(2)])\n")
    bundle = ip.user_ns["_port"]._repr_mimebundle_()
    assert "text/plain" in bundle and "text/html" in bundle
    assert "application/vnd.porter.cell+json" in bundle
    assert "numpy.concatenate" in bundle["text/html"]
    assert "concat" in bundle["text/plain"]


def test_last_expression_is_displayed_and_bound_to_underscore(ip):
    run(ip, "%%port\nimport numpy as np\nnp.ones(2).sum()\n")
    assert ip.user_ns["_"] == 2.0


def test_time_and_shell_lines_keep_working_inside_a_port_cell(ip, capsys):
    result = run(
        ip,
        "%%port\nimport numpy as np\n%time z = np.ones(3)\n!echo porter-shell-ok\nw = np.exp(z)\n",
    )
    assert result.success, result.error_in_exec
    assert np.allclose(ip.user_ns["w"], np.e)
    out = capsys.readouterr().out
    assert "porter-shell-ok" in out
    assert "Wall time" in out or "CPU times" in out


def test_malformed_arguments_print_usage_and_do_not_run(ip, capsys):
    ip.user_ns["marker"] = 1
    result = run(ip, "%%port --no-such-option\nmarker = 2\n")
    assert ip.user_ns["marker"] == 1
    assert not result.success or "usage" in capsys.readouterr().err.lower()
    assert "_port" not in ip.user_ns


def test_a_syntax_error_is_ipythons_and_nothing_is_recorded(ip, capsys):
    result = run(ip, "%%port\nimport numpy as np\nx = (\n")
    assert "_port" not in ip.user_ns
    captured = capsys.readouterr()
    assert "SyntaxError" in captured.out + captured.err
    assert "porter_ext" not in captured.out + captured.err  # shown as IPython shows it
    # the cell failed, as it does without porter (a kernel replies with an error)
    assert not result.success and isinstance(result.error_in_exec, SyntaxError)
    assert run(ip, "y = 1").success


def test_a_raising_cell_reports_calls_and_reraises(ip):
    ip.user_ns["before"] = "kept"
    result = run(
        ip, "%%port\nimport numpy as np\na = np.exp(np.ones(2))\nraise KeyError('halfway')\nb = 1\n"
    )
    assert isinstance(result.error_in_exec, KeyError)
    assert "a" in ip.user_ns and "b" not in ip.user_ns
    assert ip.user_ns["before"] == "kept"
    port = ip.user_ns["_port"]
    assert port.entry.error.type == "KeyError"
    assert port.entry.error.line == 3
    assert "numpy.exp" in set(port.calls["name"])


def test_strict_mode_raises_naming_the_call_and_its_line(ip):
    import porter_ext

    result = run(
        ip,
        "%%port --strict\nimport torch\nfrom array_api_compat import array_namespace\n"
        "x = torch.ones(3)\nxp = array_namespace(x)\ny = xp.exp2(x)\n",
    )
    assert isinstance(result.error_in_exec, porter_ext.NonStandardError)
    message = str(result.error_in_exec)
    assert "exp2" in message and "line 5" in message and "backend.exp2" in message


def test_strict_mode_allows_the_escape_hatch(ip):
    result = run(
        ip,
        "%%port --strict\nimport torch\nfrom array_api_compat import array_namespace\n"
        "x = torch.ones(3)\nxp = array_namespace(x)\ny = xp.backend.exp2(xp.sum(x, axis=0))\n",
    )
    assert result.success, result.error_in_exec
    statuses = dict(
        zip(ip.user_ns["_port"].calls["name"], ip.user_ns["_port"].calls["status"], strict=True)
    )
    assert statuses["torch.exp2"] == "acknowledged"


def test_strict_mode_rejects_direct_non_standard_calls(ip):
    import porter_ext

    result = run(ip, "%%port --strict\nimport torch\nx = torch.ones(3)\ny = torch.max(x, -x)\n")
    assert isinstance(result.error_in_exec, porter_ext.NonStandardError)
    assert "maximum" in str(result.error_in_exec)
    assert "y" not in ip.user_ns


def test_functions_defined_in_a_port_cell_are_recorded_when_a_later_cell_calls_them(ip):
    run(ip, "%%port\nimport torch\ndef f(x):\n    return x.exp()\n")
    run(ip, "%%port\ny = f(torch.ones(2))\n")
    names = set(ip.user_ns["_port"].calls["name"])
    assert "Tensor.exp" in names


def test_port_on_records_every_cell_until_off(ip, capsys):
    ip.run_line_magic("port", "on")
    run(ip, "import numpy as np\na = np.transpose(np.ones((2, 3)))\n")
    port = ip.user_ns["_port"]
    assert "numpy.transpose" in set(port.calls["name"])
    ip.run_line_magic("port", "status")
    assert "on" in capsys.readouterr().out
    ip.run_line_magic("port", "off")
    ip.user_ns.pop("_port")
    run(ip, "b = np.transpose(np.ones((2, 3)))\n")
    assert "_port" not in ip.user_ns


def test_port_report_writes_json_and_clear_empties_it(ip, tmp_path):
    run(ip, "%%port\nimport numpy as np\na = np.power(np.ones(2), 2)\n")
    path = tmp_path / "r.json"
    ip.run_line_magic("port", f"report -o {path} --format json")
    data = json.loads(path.read_text())
    assert data["schema"] == "porter.report/1"
    assert data["summary"]["non_standard"] >= 1
    ip.run_line_magic("port", "clear")
    ip.run_line_magic("port", f"report -o {path} --format json")
    assert json.loads(path.read_text())["cells"] == []


def test_bad_line_magic_arguments_are_usage_errors(ip):
    from IPython.core.error import UsageError

    with pytest.raises(UsageError):
        ip.run_line_magic("port", "sideways")
    with pytest.raises(UsageError):
        ip.run_line_magic("port", "report --format pdf")


def _fresh_shell(after_load: str) -> str:
    """The last line ``after_load`` prints in a fresh interpreter whose IPython shell
    ``ip`` has porter loaded."""
    code = (
        "import sys\nfrom IPython.core.interactiveshell import InteractiveShell\n"
        "ip = InteractiveShell.instance()\nip.run_line_magic('load_ext', 'porter_ext')\n"
        + after_load
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


def test_load_ext_is_light():
    printed = _fresh_shell(
        "print(sorted(m for m in ('torch', 'jax', 'cupy', 'pandas') if m in sys.modules))\n"
    )
    assert printed == "[]"


def test_a_cell_without_fix_and_a_worker_leave_the_rewriting_machinery_unloaded():
    """The rewriting side (libcst, the table's templates: a second and more to import)
    loads with ``--fix`` only: not for a recorded cell, nor in a replay's worker, which
    starts once per backend at the start of every notebook (issue 29, time)."""
    printed = _fresh_shell(
        "ip.run_cell('%%port --no-replay\\nimport numpy as np\\na = np.ones(2).sum(0)')\n"
        "assert ip.user_ns['_port'].entry.calls, 'nothing recorded'\n"
        "import porter_ext.session.worker_program, porter_ext.replay.worker_side\n"
        "print(sorted(m for m in ('libcst', 'porter_ext.fix.verify_cell') if m in sys.modules))\n"
    )
    assert printed == "[]"


def test_load_ext_works_with_only_numpy(tmp_path):
    # hide torch and jax as if they were not installed
    code = (
        "import sys\nfor m in ('torch', 'jax', 'jaxlib', 'cupy'):\n    sys.modules[m] = None\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "ip = InteractiveShell.instance()\nip.run_line_magic('load_ext', 'porter_ext')\n"
        "r = ip.run_cell('%%port\\nimport numpy as np\\na = np.concatenate([np.ones(2)])\\n')\n"
        "print(r.success, ip.user_ns['_port'].entry.calls[0].name)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "True numpy.concatenate"


def test_a_failing_rewrite_leaves_the_cell_running_and_the_transformer_registered(
    ip, monkeypatch, capsys
):
    from porter_ext.session import port_on as session_module

    def broken(tree, cell, **_):
        raise RuntimeError("porter bug")

    ip.run_line_magic("port", "on")
    monkeypatch.setattr(session_module, "transform", broken)
    monkeypatch.setenv("PORTER_DEBUG", "0")
    result = run(ip, "import numpy as np\nv = np.ones(2).sum()\n")
    assert result.success and ip.user_ns["v"] == 2.0
    assert "porter bug" in capsys.readouterr().err
    assert any(isinstance(t, session_module.OnTransformer) for t in ip.ast_transformers)
    # under PORTER_DEBUG the failure goes through the one guard and is loud: IPython
    # names it and unregisters the transformer (the cell still runs)
    monkeypatch.setenv("PORTER_DEBUG", "1")
    with pytest.warns(UserWarning, match="porter bug"):
        result = run(ip, "w = np.ones(3).sum()\n")
    assert result.success and ip.user_ns["w"] == 3.0
    assert not any(isinstance(t, session_module.OnTransformer) for t in ip.ast_transformers)


def test_port_report_without_a_path_displays_the_report(ip, capsys):
    run(ip, "%%port\nimport numpy as np\na = np.power(np.ones(2), 2)\n")
    ip.run_line_magic("port", "report --format md")
    out = capsys.readouterr().out
    assert "numpy.power" in out or "numpy\\.power" in out
