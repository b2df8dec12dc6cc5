"""Supervised fine-tuning of a small causal LM into an IndexLM (answers with block intervals).

Input: the chat JSONL written by ``blockdex dataset sft`` (system, user = numbered blocks and
task, assistant = ``[[a,b],…]`` or ``NA``). The loss is taken on the assistant answer only, so the
model learns to *select*, not to repeat the page.

On a GPU, with a real base model (any Hugging Face causal LM with a chat template)::

    blockdex dataset sft --datasets scrapinghub-aeb,wcxb --out sft.jsonl
    python scripts/train_indexlm.py --data sft.jsonl --model Qwen/Qwen2.5-0.5B-Instruct \\
        --out indexlm --epochs 2 --lora

then export for llama.cpp (``convert_hf_to_gguf.py indexlm --outtype q8_0``) and run it with
``blockdex extract page.html --predictor llm --llm-model indexlm.gguf``.

``--smoke`` runs a few steps on this CPU with a tiny randomly initialised GPT-2 and a tokenizer
trained on the data itself (nothing is downloaded): it checks the data path, masking and loop.
Needs ``torch``, ``transformers`` (and ``peft`` for ``--lora``); not part of blockdex's extras.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def load_examples(path: Path, limit: int | None) -> list[list[dict[str, str]]]:
    rows = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            rows.append(json.loads(line)["messages"])
            if limit and len(rows) >= limit:
                break
    if not rows:
        raise SystemExit(f"{path} holds no examples")
    return rows


def render_chat(messages: list[dict[str, str]], tokenizer) -> tuple[str, str]:
    """(prompt, answer) text; the chat template when the tokenizer has one."""
    prompt_msgs, answer = messages[:-1], messages[-1]["content"]
    if getattr(tokenizer, "chat_template", None):
        prompt = tokenizer.apply_chat_template(
            prompt_msgs, tokenize=False, add_generation_prompt=True
        )
    else:
        prompt = (
            "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in prompt_msgs) + "<|assistant|>\n"
        )
    return prompt, answer


def smoke_tokenizer(examples: list[list[dict[str, str]]]):
    """A small byte-level BPE tokenizer trained on the examples (no download)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=2000, special_tokens=["<unk>", "<pad>", "<eos>"])
    tok.train_from_iterator((m["content"] for ex in examples for m in ex), trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", eos_token="<eos>"
    )


def encode(examples, tokenizer, max_len: int):
    """Token ids with labels masked (-100) everywhere but the answer."""
    out = []
    for messages in examples:
        prompt, answer = render_chat(messages, tokenizer)
        p_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        a_ids = tokenizer(answer, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        p_ids = p_ids[-(max_len - len(a_ids)) :] if len(p_ids) + len(a_ids) > max_len else p_ids
        out.append((p_ids + a_ids, [-100] * len(p_ids) + a_ids))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", required=True, type=Path)
    ap.add_argument("--model", help="base model name or path (not needed with --smoke)")
    ap.add_argument("--out", type=Path, default=Path("indexlm"))
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--max-len", type=int, default=4096)
    ap.add_argument(
        "--lora", action="store_true", help="train LoRA adapters (peft) instead of all weights"
    )
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--smoke", action="store_true", help="a few CPU steps on a tiny random model")
    args = ap.parse_args()
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer, GPT2Config, GPT2LMHeadModel
    except ImportError:
        raise SystemExit(
            "needs torch and transformers: pip install torch transformers peft"
        ) from None

    examples = load_examples(args.data, 16 if args.smoke else args.limit)
    if args.smoke:
        tokenizer = smoke_tokenizer(examples)
        model = GPT2LMHeadModel(
            GPT2Config(vocab_size=len(tokenizer), n_positions=1024, n_embd=64, n_layer=2, n_head=2)
        )
        max_len, steps = 512, 3
    else:
        if not args.model:
            raise SystemExit("--model is required (or --smoke)")
        tokenizer = AutoTokenizer.from_pretrained(args.model)
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype="auto")
        max_len, steps = args.max_len, None
    if args.lora:
        from peft import LoraConfig, get_peft_model

        targets = ["c_attn"] if args.smoke else ["q_proj", "k_proj", "v_proj", "o_proj"]
        model = get_peft_model(
            model, LoraConfig(r=16, lora_alpha=32, target_modules=targets, task_type="CAUSAL_LM")
        )
    data = encode(examples, tokenizer, max_len)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model.to(device).train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr)
    total = steps or max(1, int(len(data) * args.epochs / args.batch))
    losses = []
    for step in range(total):
        batch = [data[(step * args.batch + k) % len(data)] for k in range(args.batch)]
        width = max(len(ids) for ids, _ in batch)
        pad = tokenizer.pad_token_id
        ids = torch.tensor([i + [pad] * (width - len(i)) for i, _ in batch], device=device)
        labels = torch.tensor(
            [lab + [-100] * (width - len(lab)) for _, lab in batch], device=device
        )
        mask = (
            torch.arange(width, device=device)[None, :]
            < torch.tensor([len(i) for i, _ in batch], device=device)[:, None]
        ).long()
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(float(loss))
        print(f"step {step + 1}/{total} loss {losses[-1]:.4f}", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)
    print(
        json.dumps(
            {"steps": total, "first_loss": losses[0], "last_loss": losses[-1], "out": str(args.out)}
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
