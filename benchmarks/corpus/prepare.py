"""Copy the public corpus of issue 29 into a folder, runnable offline and quickly.

The corpus is others' work: it is never committed here. A person fetches four public
repositories (``git clone``, or any snapshot of them: a bare mirror works too, files are
then read with ``git show HEAD:PATH``) and runs

    python benchmarks/corpus/prepare.py -o /tmp/corpus \\
        --handbook PythonDataScienceHandbook --zero-to-hero nn-zero-to-hero \\
        --makemore makemore --llms LLMs-from-scratch

which writes ``handbook/`` (jakevdp's notebooks 02.02-02.08 and the data file they read),
``makemore/`` (karpathy's makemore lectures parts 2-5 with ``names.txt``, which lives in
the ``makemore`` repository, not in ``nn-zero-to-hero``) and ``llms/`` (rasbt's ch03 and
ch04 main-chapter notebooks with the module ch04 imports).

Every change to a notebook or a file is one of the rules below, each with why it is
there; nothing is edited by hand. The rules that applied are printed, per notebook.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent

HANDBOOK = [
    "02.02-The-Basics-Of-NumPy-Arrays",
    "02.03-Computation-on-arrays-ufuncs",
    "02.04-Computation-on-arrays-aggregates",
    "02.05-Computation-on-arrays-broadcasting",
    "02.06-Boolean-Arrays-and-Masks",
    "02.07-Fancy-Indexing",
    "02.08-Sorting",
]
MAKEMORE = ["makemore_part2_mlp", "makemore_part3_bn", "makemore_part4_backprop"]
MAKEMORE += ["makemore_part5_cnn1"]
LLMS = ["ch03", "ch04"]

#: a training loop of the lectures runs this many steps instead of 200000
STEPS = 300


@dataclass(frozen=True)
class Rule:
    """One change made to the source of a code cell (or of a copied Python file)."""

    name: str
    why: str
    pattern: str
    replace: str | Callable[[re.Match], str]
    only: tuple[str, ...] = ()  # the notebooks (stems) it applies to; () = all

    def apply(self, stem: str, source: str) -> tuple[str, int]:
        if self.only and stem not in self.only:
            return source, 0
        return re.subn(self.pattern, self.replace, source, flags=re.MULTILINE)


AGG = 'import matplotlib; matplotlib.use("Agg")  # prepare.py: headless, no inline figures'

RULES = [
    Rule(
        "matplotlib-agg",
        "figures are drawn as in the lecture but headless: Agg renders without a display "
        "and puts no image into the outputs, so runs are quick and outputs compare as text",
        r"^%matplotlib inline\s*$",
        AGG,
    ),
    Rule(
        "matplotlib-agg-import",
        "ch04 imports pyplot without a %matplotlib line: Agg is chosen before it",
        r"^import matplotlib\.pyplot as plt\s*$",
        AGG + "\nimport matplotlib.pyplot as plt",
        only=("ch04",),
    ),
    Rule(
        "seaborn-style",
        "matplotlib 3.6 renamed the seaborn styles; the old name raises OSError today",
        r"plt\.style\.use\('seaborn-whitegrid'\)",
        "plt.style.use('seaborn-v0_8-whitegrid')",
    ),
    Rule(
        "timeit-once",
        "%timeit repeats its statement for seconds (7 runs of many loops); once is "
        "enough to exercise the code, and timings are not what is compared",
        r"^%timeit (?!-n)",
        "%timeit -n 1 -r 1 ",
    ),
    Rule(
        "seattle-weather-offline",
        "vega_datasets is not a dependency and may fetch its data; a deterministic stand-in "
        "with the same columns (date, precipitation) is read instead, the cell as written",
        r"^from vega_datasets import data\s*$",
        "import vega_standin as data  # prepare.py: offline stand-in for vega_datasets.data",
        only=("02.06-Boolean-Arrays-and-Masks",),
    ),
    Rule(
        "training-steps-loop",
        f"a makemore training loop of 200000 steps takes minutes per run; {STEPS} steps "
        "exercise the same code",
        r"\brange\(200000\)(.*)$",
        rf"range({STEPS})\g<1>  # prepare.py: was range(200000)",
    ),
    Rule(
        "training-steps-max",
        f"as above, where the lecture names the count max_steps ({STEPS} instead of 200000)",
        r"^(\s*)max_steps = 200000\b",
        rf"\g<1>max_steps = {STEPS}  # prepare.py: was 200000",
    ),
    Rule(
        "loss-curve-chunks",
        f"part 5 plots the loss averaged over chunks of 1000 steps, which {STEPS} steps "
        "cannot be cut into (view raises); chunks of 100 draw the same curve",
        r"\.view\(-1, 1000\)(.*)$",
        r".view(-1, 100)\g<1>  # prepare.py: was view(-1, 1000)",
        only=("makemore_part5_cnn1",),
    ),
    Rule(
        "tiktoken-version",
        "tiktoken is not installed offline (see tiktoken-standin); printing its version "
        "would raise PackageNotFoundError",
        r'^print\("tiktoken version:", version\("tiktoken"\)\)\s*$',
        'print("tiktoken version:", "stand-in (prepare.py)")',
        only=("ch04", "previous_chapters"),
    ),
    Rule(
        "tiktoken-standin",
        "tiktoken downloads its GPT-2 BPE files on first use, which needs the network; "
        "a tiny deterministic word-level stand-in with the same encode/decode/n_vocab is "
        "imported under the same name (token ids differ from GPT-2's, shapes do not)",
        r"^import tiktoken\s*$",
        "import tiktoken_standin as tiktoken  # prepare.py: offline stand-in for tiktoken",
        only=("ch04", "previous_chapters"),
    ),
]

#: files copied beside the notebooks: (repository key, path in it, folder, name)
FILES = [
    ("handbook", "notebooks/data/president_heights.csv", "handbook/data", None),
    ("makemore", "names.txt", "makemore", None),
    ("llms", "ch04/01_main-chapter-code/previous_chapters.py", "llms", None),
]
#: stand-ins shipped with this script, copied beside the notebooks that import them
STANDINS = [("vega_standin.py", "handbook"), ("tiktoken_standin.py", "llms")]


def read(repo: Path, path: str) -> bytes:
    """A file of a clone (its work tree) or of a bare snapshot (its HEAD)."""
    if (repo / path).is_file():
        return (repo / path).read_bytes()
    done = subprocess.run(
        ["git", "-C", str(repo), "show", f"HEAD:{path}"], capture_output=True, check=False
    )
    if done.returncode:
        raise SystemExit(f"{path} is not in {repo}: {done.stderr.decode().strip()}")
    return done.stdout


def transform(stem: str, source: str, used: dict[str, int]) -> str:
    for rule in RULES:
        source, n = rule.apply(stem, source)
        if n:
            used[rule.name] = used.get(rule.name, 0) + n
    return source


def prepare_notebook(raw: bytes, stem: str) -> tuple[dict, dict[str, int]]:
    """The notebook with every rule applied to its code cells, and its outputs cleared
    (the benchmark runs it; the stored outputs are the authors' machine's)."""
    nb = json.loads(raw)
    used: dict[str, int] = {}
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        cell["source"] = transform(stem, text, used)
        cell["outputs"] = []
        cell["execution_count"] = None
    return nb, used


def sources(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    """(repository key, path in it, output folder) of each notebook of the corpus."""
    out = [("handbook", f"notebooks/{n}.ipynb", "handbook") for n in HANDBOOK]
    out += [("zero_to_hero", f"lectures/makemore/{n}.ipynb", "makemore") for n in MAKEMORE]
    out += [("llms", f"{n}/01_main-chapter-code/{n}.ipynb", "llms") for n in LLMS]
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--handbook", type=Path, required=True, help="PythonDataScienceHandbook")
    parser.add_argument("--zero-to-hero", type=Path, required=True, help="nn-zero-to-hero")
    parser.add_argument("--makemore", type=Path, required=True, help="makemore (names.txt)")
    parser.add_argument("--llms", type=Path, required=True, help="LLMs-from-scratch")
    args = parser.parse_args(argv)
    repos = {
        "handbook": args.handbook,
        "zero_to_hero": args.zero_to_hero,
        "makemore": args.makemore,
        "llms": args.llms,
    }
    for key, path, folder in sources(args):
        stem = Path(path).stem
        nb, used = prepare_notebook(read(repos[key], path), stem)
        target = args.output / folder / f"{stem}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
        rules = ", ".join(f"{k} x{v}" for k, v in used.items()) or "no change"
        print(f"{folder}/{stem}.ipynb: {rules}")
    for key, path, folder, name in FILES:
        target = args.output / folder / (name or Path(path).name)
        target.parent.mkdir(parents=True, exist_ok=True)
        data = read(repos[key], path)
        if target.suffix == ".py":
            used = {}
            data = transform(target.stem, data.decode(), used).encode()
            print(f"{folder}/{target.name}: " + (", ".join(used) or "no change"))
        target.write_bytes(data)
    for name, folder in STANDINS:
        (args.output / folder / name).write_bytes((HERE / name).read_bytes())
        print(f"{folder}/{name}: stand-in shipped with prepare.py")


if __name__ == "__main__":
    main()
