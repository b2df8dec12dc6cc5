"""Milliseconds a page of this checkout's pipeline against another commit's, alternating processes.

A peer's speed moves from run to run on a shared machine (resiliparse ran l3s-gn1 at 739 and at
823 pages/s in two sessions while blockdex held still), so a few percent gained by a change is
lost in a ratio against a peer. This compares blockdex with itself: ``--base`` (a commit, default
``HEAD~1``) is checked out into a temporary git worktree and its compiled extensions are built there
(``setup.py build_ext --inplace``, ~30 s); then a child process times the default pipeline
(``Extractor.extract(html, output=FORMAT)``, as users call it) over the set's pages with one
source tree, then the other, ``--pairs`` times. Each child runs ``--rounds`` rounds over the pages after one warm-up
page and reports the mean milliseconds a page. The figure to quote is the median of the pairs'
ratios (base ÷ this checkout; above 1 this checkout is faster).

    python benchmarks/commit_ab.py [--base 032bea0] [--dataset scrapinghub-aeb] [--format text]
        [--limit 200] [--pairs 3] [--rounds 3] [--keep /tmp/blockdex-base] [--instructions]

``--instructions`` counts instead of timing, for a machine too busy for a few percent to show:
each child runs under ``valgrind --tool=cachegrind`` (``PYTHONHASHSEED=0``) once with one round
over the pages and once with three, and the difference, divided by twice the pages, is the
instructions a page of the pipeline takes (imports, model loading and reading the pages cancel
out; what does not cancel, ~10M instructions of start-up that vary between runs, is spread over
the pages). Garbage collection is off during the rounds (when a collection falls depends on
the allocations before it, which the change under test moves). They leave out what
instructions do not show
(cache misses, branch mispredictions, memory, the collector), so a change that moves memory
traffic needs timing too. ``--limit 100`` takes a few minutes a tree; ``--pairs`` and
``--rounds`` are unused.

``--keep DIR`` builds the base into DIR and leaves it there; a later run with the same DIR and
``--base`` reuses it. The build needs Cython importable: since issue 45 ``setup.py`` stops
without it; a base from before then silently built nothing, so a child whose tree has a
compiled twin missing stops the run instead of timing the Python code.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from blockdex.evaluate.datasets import shared_data_dir

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import sys, time, warnings
warnings.filterwarnings("ignore")
import blockdex
from blockdex.evaluate.datasets import load_dataset
from blockdex.extract import Extractor
dataset, fmt, limit, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
try:  # a base from before the pure-Python twins were retired (issue 45) could run without
    from blockdex.speedups import twins  # them; since, importing blockdex checks the extensions
except ImportError:
    twins = dict
missing = [name for name, mod in twins().items() if mod is None]
if missing:  # a tree built without Cython: timing its Python paths would mislead
    sys.exit(f"compiled twins not built in {blockdex.__file__}: {', '.join(missing)}")
pages = [p.html for p in load_dataset(dataset, limit=limit)]
ex = Extractor()
ex.extract(pages[0], output=fmt)
if sys.argv[5:] == ["nogc"]:  # --instructions: a collection falls in one run and not the other
    import gc
    gc.collect()
    gc.disable()
t0 = time.perf_counter()
for _ in range(rounds):
    for html in pages:
        ex.extract(html, output=fmt)
print(blockdex.__file__)
print((time.perf_counter() - t0) / (rounds * len(pages)) * 1000)
"""


def _build(base: str, where: Path) -> None:
    if not (where / "src" / "blockdex").is_dir():
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(where), base],
            check=True,
            capture_output=True,
        )
    head = subprocess.run(
        ["git", "-C", str(where), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    want = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", base], check=True, capture_output=True, text=True
    ).stdout.strip()
    if head != want:
        raise SystemExit(f"{where} holds {head[:10]}, not {base} ({want[:10]}): use another --keep")
    print(f"building {base} ({head[:10]}) in {where} …", file=sys.stderr)
    subprocess.run(
        [sys.executable, "setup.py", "build_ext", "--inplace", "-j", "2"],
        cwd=where,
        check=True,
        capture_output=True,
    )


def _child_env(src: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(src))
    data = shared_data_dir()  # the base's worktree has no ../shared beside it
    if data is not None:
        env.setdefault("BLOCKDEX_DATA", str(data))
    env.pop("BLOCKDEX_PURE_PYTHON", None)  # honoured by bases from before issue 45's change
    return env


def _time(src: Path, args: argparse.Namespace) -> float:
    env = _child_env(src)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, args.dataset, args.format, str(args.limit), str(args.rounds)],
        env=env,
        cwd=tempfile.gettempdir(),  # not the checkout: its src must not shadow PYTHONPATH's
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"the child timing {src} failed:\n{out.stderr[-2000:]}")
    where, ms = out.stdout.strip().splitlines()[-2:]
    if not Path(where).resolve().is_relative_to(src.resolve()):
        raise SystemExit(f"the child imported blockdex from {where}, not from {src}")
    return float(ms)


def _instructions(src: Path, args: argparse.Namespace, rounds: int) -> int:
    """Instructions of one child process (cachegrind's ``I refs``) running ``rounds`` rounds."""
    env = _child_env(src)
    env["PYTHONHASHSEED"] = "0"  # the same dict and set layouts in both trees' runs
    out = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
         sys.executable, "-c", CHILD, args.dataset, args.format, str(args.limit), str(rounds),
         "nogc"],
        env=env,
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
    )  # fmt: skip
    found = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
    if out.returncode != 0 or found is None:
        raise SystemExit(f"the child counting {src} failed:\n{out.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def _per_page(src: Path, args: argparse.Namespace) -> float:
    """Instructions a page: two more rounds over the pages, less everything else."""
    return (_instructions(src, args, 3) - _instructions(src, args, 1)) / (2 * args.limit)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--base", default="HEAD~1", help="the commit to compare with (default HEAD~1)")
    ap.add_argument("--dataset", default="scrapinghub-aeb")
    ap.add_argument("--format", default="text")
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="build the base here and leave it (reused)")
    ap.add_argument(
        "--instructions", action="store_true", help="count instructions a page (cachegrind)"
    )
    args = ap.parse_args()

    where = args.keep or Path(tempfile.mkdtemp(prefix="blockdex-base-")) / "tree"
    try:
        _build(args.base, where)
        if args.instructions:
            base_i = _per_page(where / "src", args)
            this_i = _per_page(ROOT / "src", args)
            print(
                f"dataset={args.dataset} format={args.format} pages={args.limit}: "
                f"{args.base} {base_i / 1e6:.3f}M instructions a page, this checkout "
                f"{this_i / 1e6:.3f}M, ratio {base_i / this_i:.4f} (above 1: fewer here)"
            )
            return 0
        ratios = []
        for k in range(args.pairs):
            base_ms = _time(where / "src", args)
            this_ms = _time(ROOT / "src", args)
            ratios.append(base_ms / this_ms)
            print(
                f"pair {k + 1}: {args.base} {base_ms:.3f} ms/page, this checkout "
                f"{this_ms:.3f} ms/page, ratio {ratios[-1]:.3f}"
            )
        print(
            f"dataset={args.dataset} format={args.format} pairs={args.pairs} "
            f"rounds={args.rounds}: ratio median {statistics.median(ratios):.3f} "
            f"(above 1: this checkout is faster)"
        )
    finally:
        if args.keep is None:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)],
                capture_output=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
