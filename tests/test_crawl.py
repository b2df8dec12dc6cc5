"""`blockdex crawl` against small sites served on loopback by the tests themselves.

The main site (crawled once, with --allow-private) has pages linked in a loop, a page only in a
gzipped sitemap under a sitemap index named by robots.txt, one only in /sitemap.xml, a path
robots.txt disallows for blockdex, an article under a utm_ URL, a print URL whose canonical is
the article and a copy of the article, a page whose canonical wrongly names the home page, a 429
with Retry-After, a redirect to a metadata address, two 20 MB pages (declared, streamed), a
20 MB PDF, a 404, an RSS feed a page announces and an Atom feed given with --feed.

Other tests: a redirect to 127.0.0.1 without --allow-private (the site at 127.0.0.2), Crawl-delay,
-i; kill -9 then --resume (each page once, recorded pages never fetched again, torn journal and
WARC tails cut); --max-pages then --resume; pages that hang or crash their worker; bad input;
--help; and the URL, scope, robots.txt, sitemap, feed and SimHash rules on their own.
No test needs the internet, and none asserts on a duration.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from blockdex.cli import main
from blockdex.crawl.discovery import parse_feed, parse_sitemap
from blockdex.crawl.politeness import RobotsRules
from blockdex.crawl.store import url_to_path
from blockdex.pagetype import OTHER, PAGE_TYPES
from blockdex.urls import normalize_url

WORDS = re.findall(
    r"\w+",
    "river harbour lantern meadow quarry orchard beacon granite willow compass ferry "
    "summit cellar market bridge tower garden valley forest island canal station library "
    "theatre museum chapel mill farm school bakery kiln forge loom barn pier dock wharf "
    "lighthouse keeper baker miller weaver smith carpenter mason farmer fisher sailor "
    "painter teacher counted carried painted mended built opened closed watched measured "
    "gathered repaired quiet bright narrow ancient crowded steep gentle rusty golden "
    "hollow broad northern",
)


def prose(seed: str, paragraphs: int = 3) -> list[str]:
    """Paragraphs of plain sentences, different for every seed and the same for one seed."""
    rng = random.Random(seed)
    out = []
    for _ in range(paragraphs):
        sentences = []
        for _ in range(5):
            words = [rng.choice(WORDS) for _ in range(rng.randint(9, 14))]
            sentences.append(" ".join(words).capitalize() + ".")
        out.append(" ".join(sentences))
    return out


def article(
    title: str,
    links: list[str] = (),  # type: ignore[assignment]
    *,
    text_seed: str | None = None,
    head: str = "",
    nav: str = "Home",
) -> bytes:
    """A page with a title, a navigation bar of ``links`` and an article of prose."""
    items = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    paragraphs = "".join(f"<p>{p}</p>" for p in prose(text_seed or title))
    return (
        f"<!doctype html><html><head><title>{title}</title>{head}</head><body>"
        f"<nav><a href='/'>{nav}</a><ul>{items}</ul></nav>"
        f"<article><h1>{title}</h1>{paragraphs}</article>"
        f"<footer>Copyright the example site</footer></body></html>"
    ).encode()


Handler = Callable[[BaseHTTPRequestHandler], None]


def respond(
    status: int = 200,
    body: bytes = b"",
    ctype: str = "text/html; charset=utf-8",
    headers: dict[str, str] | None = None,
) -> Handler:
    def handle(req: BaseHTTPRequestHandler) -> None:
        req.send_response(status)
        req.send_header("Content-Type", ctype)
        req.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            req.send_header(key, value)
        req.end_headers()
        req.wfile.write(body)

    return handle


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client closing a kept-alive connection is no news


class Site:
    """A threaded HTTP/1.1 server with a route table and a log of the requests it got."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.routes: dict[str, Handler] = {}
        self.log: list[tuple[str, str]] = []
        self.inflight = 0
        self.max_inflight = 0
        self._lock = threading.Lock()
        site = self

        class RequestHandler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                with site._lock:
                    site.log.append((self.path, self.headers.get("User-Agent", "")))
                    site.inflight += 1
                    site.max_inflight = max(site.max_inflight, site.inflight)
                try:
                    route = site.routes.get(self.path) or site.routes.get(self.path.split("?")[0])
                    (route or respond(404, b"<html><body>Not found</body></html>"))(self)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True
                finally:
                    with site._lock:
                        site.inflight -= 1

            def log_message(self, *args: Any) -> None:
                pass

        self.server = QuietServer((host, 0), RequestHandler)
        self.base = f"http://{host}:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Site:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def paths(self) -> list[str]:
        with self._lock:
            return [path for path, _ in self.log]


def big_declared(req: BaseHTTPRequestHandler) -> None:
    """20 MB, with its length declared: refused on the headers."""
    size = 20 * 1024 * 1024
    req.send_response(200)
    req.send_header("Content-Type", "text/html")
    req.send_header("Content-Length", str(size))
    req.end_headers()
    chunk = b"<p>" + b"x" * 65533
    for _ in range(size // len(chunk)):
        req.wfile.write(chunk)


def big_streamed(req: BaseHTTPRequestHandler) -> None:
    """20 MB in chunks, with no length: refused once the cap is passed."""
    req.send_response(200)
    req.send_header("Content-Type", "text/html")
    req.send_header("Transfer-Encoding", "chunked")
    req.end_headers()
    chunk = b"<p>" + b"y" * 65533
    for _ in range(20 * 1024 * 1024 // len(chunk)):
        req.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
    req.wfile.write(b"0\r\n\r\n")


def pdf_cut_short(outcome: list[str]) -> Handler:
    """A 20 MB PDF; ``outcome`` says whether it could be sent whole ("sent") or not ("cut")."""

    def handle(req: BaseHTTPRequestHandler) -> None:
        chunk = b"%PDF-1.4 " + b"0" * 65527
        req.send_response(200)
        req.send_header("Content-Type", "application/pdf")
        req.send_header("Content-Length", str(320 * len(chunk)))
        req.end_headers()
        try:
            for _ in range(320):
                req.wfile.write(chunk)
        except OSError:
            outcome.append("cut")
            raise
        outcome.append("sent")

    return handle


def busy_once() -> Handler:
    """429 with Retry-After: 1 on the first request, the page after it."""
    calls = []

    def handle(req: BaseHTTPRequestHandler) -> None:
        calls.append(1)
        if len(calls) == 1:
            respond(429, b"slow down", "text/plain", {"Retry-After": "1"})(req)
        else:
            respond(200, article("Busy page"))(req)

    return handle


def main_site(site: Site) -> None:
    base = site.base
    r = site.routes
    r["/robots.txt"] = respond(
        200,
        (
            "User-agent: blockdex\nDisallow: /private/\nAllow: /\n\n"
            "User-agent: *\nDisallow: /\n\n"
            f"Sitemap: {base}/sitemap_index.xml\n"
        ).encode(),
        "text/plain",
    )
    r["/sitemap_index.xml"] = respond(
        200,
        (
            '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<sitemap><loc>{base}/sitemaps/pages.xml.gz</loc></sitemap></sitemapindex>"
        ).encode(),
        "application/xml",
    )
    r["/sitemaps/pages.xml.gz"] = respond(
        200,
        gzip.compress(
            (
                '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                f"<url><loc>{base}/only-in-sitemap</loc></url><url><loc>{base}/</loc></url>"
                "</urlset>"
            ).encode()
        ),
        "application/gzip",
    )
    r["/sitemap.xml"] = respond(
        200,
        (
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<url><loc>{base}/from-default-sitemap</loc></url></urlset>"
        ).encode(),
        "text/xml",
    )
    home_links = [
        "/a",
        "/b",
        "/private/secret",
        "/post?utm_source=news&utm_medium=email",
        "/post?print=1",
        "/post-copy",
        "/wrong-canonical",
        "/busy",
        "/go-metadata",
        "/big",
        "/big-stream",
        "/doc.pdf",
        "/missing",
        "/a#top",
        "/picture.png",
        "http://example.invalid/elsewhere",
        "mailto:someone@example.org",
    ]
    feed_link = '<link rel="alternate" type="application/rss+xml" href="/rss.xml">'
    r["/"] = respond(200, article("Home page", home_links, head=feed_link))
    r["/a"] = respond(200, article("Page A", ["/b", "/"]))
    r["/b"] = respond(200, article("Page B", ["/a"]))
    r["/private/secret"] = respond(200, article("Secret"))
    canonical = f'<link rel="canonical" href="{base}/post">'
    r["/post"] = respond(200, article("The post", ["/"], head=canonical))
    r["/post?print=1"] = respond(200, article("The post", [], head=canonical, nav="Print"))
    r["/post-copy"] = respond(200, article("The post", ["/a", "/b"], nav="Copy"))
    home_canonical = f'<link rel="canonical" href="{base}/">'
    r["/wrong-canonical"] = respond(200, article("Other story", ["/"], head=home_canonical))
    r["/busy"] = busy_once()
    r["/go-metadata"] = respond(302, b"", headers={"Location": "http://169.254.169.254/latest/"})
    r["/big"] = big_declared
    r["/big-stream"] = big_streamed
    site.pdf_outcome = []  # type: ignore[attr-defined]
    r["/doc.pdf"] = pdf_cut_short(site.pdf_outcome)  # type: ignore[attr-defined]
    r["/rss.xml"] = respond(
        200,
        (
            '<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>'
            f"<item><title>One</title><link>{base}/from-rss</link></item></channel></rss>"
        ).encode(),
        "application/rss+xml",
    )
    r["/atom.xml"] = respond(
        200,
        (
            b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Log</title>'
            b'<entry><title>Two</title><link href="/from-atom"/></entry></feed>'
        ),
        "application/atom+xml",
    )
    for name in ("only-in-sitemap", "from-default-sitemap", "from-rss", "from-atom"):
        r[f"/{name}"] = respond(200, article(name.replace("-", " ").title(), ["/"]))


def read_pages(out: Path) -> list[dict[str, Any]]:
    lines = (out / "pages.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def by_path(records: list[dict[str, Any]], base: str) -> dict[str, dict[str, Any]]:
    out = {}
    for rec in records:
        path = rec["url"][len(base) :]
        assert path not in out, f"{path} recorded twice"
        out[path] = rec
    return out


FAST = ["--delay", "0", "--jobs", "1", "--quiet"]


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Site, Path, int]]:
    out = tmp_path_factory.mktemp("crawl") / "out"
    with Site() as site:
        main_site(site)
        code = main(
            [
                "crawl",
                site.base + "/",
                "--out",
                str(out),
                "--allow-private",
                "--feeds",
                "--feed",
                site.base + "/atom.xml",
                "--warc",
                "--per-host",
                "2",
                *FAST,
            ]
        )
        yield site, out, code


def test_every_url_ends_as_exactly_one_record(crawled):
    site, out, code = crawled
    assert code == 0
    pages = by_path(read_pages(out), site.base)
    expected = {
        "/",
        "/a",
        "/b",
        "/private/secret",
        "/post",
        "/post?print=1",
        "/post-copy",
        "/wrong-canonical",
        "/busy",
        "/go-metadata",
        "/big",
        "/big-stream",
        "/doc.pdf",
        "/missing",
        "/only-in-sitemap",
        "/from-default-sitemap",
        "/from-rss",
        "/from-atom",
    }
    assert set(pages) == expected
    # every page written has its file, holding its text; nothing is written twice
    written = {p: r for p, r in pages.items() if r["file"]}
    for path in ("/", "/a", "/b", "/only-in-sitemap", "/from-default-sitemap", "/from-rss"):
        rec = written[path]
        text = (out / rec["file"]).read_text(encoding="utf-8")
        assert rec["content"] == text and rec["status"] == 200 and rec["fetched_at"]
        assert rec["title"] and rec["links"] is not None
        assert rec["page_type"] in (*PAGE_TYPES, OTHER) and 0 <= rec["page_type_confidence"] <= 1
    assert pages["/missing"]["page_type"] is None  # no page, no type
    files = [p for p in out.rglob("*.md")]
    assert len(files) == len(written)
    summary = json.loads((out / "_SUMMARY.json").read_text())
    assert summary["pages"] == len(expected)
    assert summary["written"] == len(written)
    assert summary["errors"] + summary["duplicates"] + summary["written"] == summary["pages"]


def test_loop_and_fragment_links_are_fetched_once(crawled):
    site, _out, _ = crawled
    counts = Counter(site.paths())
    assert counts["/a"] == 1 and counts["/b"] == 1 and counts["/"] == 1
    assert counts["/robots.txt"] == 1
    assert "/picture.png" not in counts  # never a page: not even asked for
    assert all(ua.startswith("blockdex/") for _, ua in site.log)


def test_sitemaps_and_feeds_find_pages_no_link_reaches(crawled):
    site, out, _ = crawled
    pages = by_path(read_pages(out), site.base)
    assert pages["/only-in-sitemap"]["via"] == f"sitemap:{site.base}/sitemaps/pages.xml.gz"
    assert pages["/from-default-sitemap"]["via"] == f"sitemap:{site.base}/sitemap.xml"
    assert pages["/from-rss"]["via"] == f"feed:{site.base}/rss.xml"
    assert pages["/from-atom"]["via"] == f"feed:{site.base}/atom.xml"
    assert "Only In Sitemap" in (out / pages["/only-in-sitemap"]["file"]).read_text()


def test_robots_disallowed_path_is_recorded_not_fetched(crawled):
    site, out, _ = crawled
    rec = by_path(read_pages(out), site.base)["/private/secret"]
    assert rec["error_kind"] == "robots_disallowed" and rec["status"] is None
    assert "/private/secret" not in site.paths()


def test_one_article_under_three_urls_is_written_once(crawled):
    site, out, _ = crawled
    pages = by_path(read_pages(out), site.base)
    group = [pages[p] for p in ("/post", "/post?print=1", "/post-copy")]
    written = [r for r in group if r["file"]]
    assert len(written) == 1
    original = written[0]["url"]
    for rec in group:
        if rec is not written[0]:
            assert rec["duplicate_of"] == original and rec["duplicate"] in (
                "canonical",
                "near-duplicate",
            )
            assert rec["content"] is None and rec["error"] is None
    wrong = pages["/wrong-canonical"]  # every page naming the home page: a site's mistake
    assert wrong["file"] and wrong["duplicate_of"] is None and wrong["canonical"] is None
    assert any("canonical link names" in w for w in wrong["warnings"])
    post_text = prose("The post")[0][:60]
    holders = [f for f in out.rglob("*.md") if post_text in f.read_text(encoding="utf-8")]
    assert len(holders) == 1
    assert not any("utm_" in path for path in site.paths())
    assert Counter(site.paths())["/post"] <= 1


def test_429_is_retried_after_retry_after(crawled):
    site, out, _ = crawled
    rec = by_path(read_pages(out), site.base)["/busy"]
    assert rec["status"] == 200 and rec["retries"] == 1 and rec["file"]
    assert Counter(site.paths())["/busy"] == 2


def test_refused_and_skipped_responses_are_recorded_with_their_reason(crawled):
    site, out, _ = crawled
    pages = by_path(read_pages(out), site.base)
    meta = pages["/go-metadata"]
    assert meta["error_kind"] == "unsafe_url" and "metadata" in meta["error"]
    for path in ("/big", "/big-stream"):
        assert pages[path]["error_kind"] == "page_too_large", pages[path]
        assert pages[path]["status"] == 200
    pdf = pages["/doc.pdf"]
    assert pdf["error_kind"] == "not_html" and pdf["status"] == 200
    deadline = time.monotonic() + 30
    while not site.pdf_outcome and time.monotonic() < deadline:
        time.sleep(0.01)
    assert site.pdf_outcome == ["cut"]  # dropped on its headers: the body was never read
    assert pages["/missing"]["error_kind"] == "http_error"
    assert pages["/missing"]["status"] == 404


def test_per_host_limit_and_summary_politeness(crawled):
    site, out, _ = crawled
    assert site.max_inflight <= 2
    summary = json.loads((out / "_SUMMARY.json").read_text())
    host = summary["hosts"][site.base.split("//")[1]]
    assert host["per_host"] == 2 and host["robots"] == {site.base: "ok"}
    assert summary["user_agent"].startswith("blockdex/")


def test_warc_holds_the_fetched_pages_for_blockdex_batch(crawled):
    from blockdex.batch import read_warc

    site, out, _ = crawled
    pages = read_pages(out)
    fetched = {r["final_url"] for r in pages if r["status"] == 200 and r["bytes"]}
    in_warc = {page.url: page for page in read_warc(out / "pages.warc.gz")}
    assert set(in_warc) == fetched
    home = in_warc[site.base + "/"]
    assert b"Home page" in home.html


# --------------------------------------------------------------------------------------------
# Address safety without --allow-private


def test_redirect_to_loopback_is_refused_without_allow_private(tmp_path, capsys):
    """The site lives at 127.0.0.2, opened by --allow-network alone; its redirect to 127.0.0.1
    is refused and recorded, and 127.0.0.1 never sees a request."""
    try:
        other = Site("127.0.0.2")
    except OSError:
        pytest.skip("127.0.0.2 is not a loopback address here")
    with Site("127.0.0.1") as inner, other as site:
        inner.routes["/secret"] = respond(200, article("Inner secret"))
        site.routes["/robots.txt"] = respond(200, b"User-agent: *\nCrawl-delay: 1\n", "text/plain")
        site.routes["/"] = respond(200, article("Outer home", ["/go-local"]))
        site.routes["/go-local"] = respond(302, b"", headers={"Location": f"{inner.base}/secret"})
        urls = tmp_path / "urls.txt"
        urls.write_text(f"# two seeds\n{site.base}/\n\n{site.base}/go-local\n")
        out = tmp_path / "out"
        network = ["--allow-network", "127.0.0.2/32"]
        assert main(["crawl", "-i", str(urls), "--out", str(out), *network, *FAST]) == 0
        pages = by_path(read_pages(out), site.base)
        assert set(pages) == {"/", "/go-local"}
        assert pages["/"]["file"] and pages["/"]["status"] == 200
        refused = pages["/go-local"]
        assert refused["error_kind"] == "unsafe_url" and "loopback" in refused["error"]
        assert refused["redirects"] == [f"{inner.base}/secret"]
        assert inner.log == []
        summary = json.loads((out / "_SUMMARY.json").read_text())
        host = summary["hosts"][site.base.split("//")[1]]
        assert host["crawl_delay"] == 1.0 and host["delay"] == 1.0

        # with no flag at all the seed itself is refused, and recorded
        out2 = tmp_path / "out2"
        assert main(["crawl", f"{site.base}/", "--out", str(out2), *FAST]) == 0
        (rec,) = read_pages(out2)
        assert rec["error_kind"] == "unsafe_url" and "--allow-private" in rec["error"]
        assert "1 errors (unsafe_url 1)" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# kill -9, then --resume


def slow_site(site: Site, n: int) -> None:
    """Pages p0..p{n-1}, each linking to the next two and back to the first (a loop)."""

    def slow(body: bytes) -> Handler:
        def handle(req: BaseHTTPRequestHandler) -> None:
            time.sleep(0.03)
            respond(200, body)(req)

        return handle

    site.routes["/"] = respond(200, article("Start", ["/p0"]))
    for i in range(n):
        links = [f"/p{j}" for j in (i + 1, i + 2) if j < n] + ["/p0", "/"]
        site.routes[f"/p{i}"] = slow(article(f"Page number {i}", links))


def read_tolerant(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_bytes().split(b"\n"):
        with contextlib.suppress(ValueError):  # the torn last line a kill may leave
            out.append(json.loads(line))
    return out


def test_kill_minus_9_then_resume_records_every_page_exactly_once(tmp_path):
    n = 60
    out = tmp_path / "out"
    with Site() as site:
        slow_site(site, n)
        cmd = [
            sys.executable,
            "-m",
            "blockdex",
            "crawl",
            site.base + "/",
            "--out",
            str(out),
            "--allow-private",
            "--no-sitemaps",
            "--per-host",
            "1",
            "--delay",
            "0.01",
            "--jobs",
            "1",
            "--depth",
            "100",
            "--user-agent",
            "blockdex-killtest/1.0",
            "--warc",
            "--quiet",
        ]
        proc = subprocess.Popen(cmd, start_new_session=True, stderr=subprocess.PIPE)
        pages = out / "pages.jsonl"
        deadline = time.monotonic() + 120
        while not pages.exists() or pages.read_bytes().count(b"\n") < 8:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the crawl recorded no pages in time"
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
        before = {r["url"] for r in read_tolerant(pages)}
        assert len(before) < n, "the crawl finished before it could be killed"
        requests_before = len(site.log)
        with pages.open("ab") as fh:  # what a kill in the middle of a write leaves
            fh.write(b'{"url": "' + site.base.encode() + b'/p5", "status": 2')
        with (out / "pages.warc.gz").open("ab") as fh:
            fh.write(b"\x1f\x8b\x08\x00 a torn WARC record")

        res = subprocess.run(
            [*cmd, "--resume"], capture_output=True, text=True, timeout=300, check=False
        )
        assert res.returncode == 0, res.stderr
        records = read_pages(out)
        urls = [r["url"] for r in records]
        expected = {site.base + "/"} | {f"{site.base}/p{i}" for i in range(n)}
        assert sorted(urls) == sorted(expected)  # each once: no duplicates, no gaps
        assert all(r["file"] for r in records)
        assert len(list(out.rglob("*.md"))) == len(expected)
        again = {path for path, _ in site.log[requests_before:]}
        assert not again & {u[len(site.base) :] for u in before}  # recorded: never refetched
        assert not list(out.rglob(".*.tmp-*"))
        summary = json.loads((out / "_SUMMARY.json").read_text())
        assert summary["pages"] == len(expected) and summary["resumed_pages"] == len(before)
        assert {ua for _, ua in site.log} == {"blockdex-killtest/1.0"}
        from blockdex.batch import read_warc

        in_warc = [page.url for page in read_warc(out / "pages.warc.gz")]
        assert sorted(in_warc) == sorted(expected)  # each page once, the torn tail cut off


def test_max_pages_stops_the_crawl_and_resume_goes_on(tmp_path, capsys):
    out = tmp_path / "out"
    with Site() as site:
        slow_site(site, 6)
        argv = ["crawl", site.base + "/", "-o", str(out), "--allow-private", "-f", "json", *FAST]
        assert main([*argv, "--max-pages", "3"]) == 0
        assert len(read_pages(out)) == 3
        first = read_pages(out)[0]
        assert first["file"].endswith("/index.json")
        assert json.loads((out / first["file"]).read_text())["title"] == "Start"
        summary = json.loads((out / "_SUMMARY.json").read_text())
        assert summary["queue_left"] > 0 and summary["fetched"] == 3
        assert "left in the queue" in capsys.readouterr().err
        assert main([*argv, "--max-pages", "0", "--resume"]) == 0
        urls = [r["url"][len(site.base) :] for r in read_pages(out)]
        assert sorted(urls) == sorted(["/", *(f"/p{i}" for i in range(6))])
        assert Counter(site.paths())["/p0"] == 1


# --------------------------------------------------------------------------------------------
# Bad input: one line on stderr, exit status 1, no traceback


def _error_of(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("blockdex: error: ") and "Traceback" not in err
    assert err.count("\n") == 1
    return err


def test_bad_input_is_one_clear_error(tmp_path, capsys):
    out = str(tmp_path / "out")
    seed = "http://127.0.0.1:9/"
    assert "'ftp://x.org/' is not an http" in _error_of(
        capsys, ["crawl", "ftp://x.org/", "-o", out]
    )
    assert "not an http" in _error_of(capsys, ["crawl", "no url here", "-o", out])
    assert "no such file" in _error_of(capsys, ["crawl", "-i", str(tmp_path / "nope"), "-o", out])
    assert "directory" in _error_of(capsys, ["crawl", "-i", str(tmp_path), "-o", out])
    assert "nothing to crawl" in _error_of(capsys, ["crawl", "-o", out])
    afile = tmp_path / "file.txt"
    afile.write_text("x")
    assert "not a directory" in _error_of(capsys, ["crawl", seed, "-o", str(afile)])
    assert "cannot create --out" in _error_of(capsys, ["crawl", seed, "-o", f"{afile}/sub"])
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine")
    assert "not empty" in _error_of(capsys, ["crawl", seed, "-o", str(full)])
    assert "--per-host must be at least 1" in _error_of(
        capsys, ["crawl", seed, "-o", out, "--per-host", "0"]
    )
    assert "--no-comments applies only" in _error_of(
        capsys, ["crawl", seed, "-o", out, "--no-comments", "-q", "price"]
    )
    assert "--favor applies only" in _error_of(
        capsys, ["crawl", seed, "-o", out, "--favor", "recall", "-q", "price"]
    )
    assert "--allow-network 'bogus'" in _error_of(
        capsys, ["crawl", seed, "-o", out, "--allow-network", "bogus"]
    )
    assert "nope" in _error_of(capsys, ["crawl", seed, "-o", out, "--predictor", "nope"])
    assert not Path(out).exists()  # refused before anything was written


def test_existing_crawl_needs_resume_and_the_same_settings(tmp_path, capsys):
    out = str(tmp_path / "out")
    seed = "http://127.0.0.1:9/"  # refused (loopback): recorded without starting workers
    assert main(["crawl", seed, "-o", out, "--quiet"]) == 0
    capsys.readouterr()
    assert "--resume" in _error_of(capsys, ["crawl", seed, "-o", out, "--quiet"])
    assert "different depth" in _error_of(
        capsys, ["crawl", seed, "-o", out, "--quiet", "--resume", "--depth", "1"]
    )
    assert "different images" in _error_of(
        capsys, ["crawl", seed, "-o", out, "--quiet", "--resume", "--images"]
    )
    assert main(["crawl", seed, "-o", out, "--quiet", "--resume"]) == 0
    assert len(read_pages(Path(out))) == 1  # recorded once, not again


def test_a_crawl_whose_manifest_predates_an_option_resumes(tmp_path, capsys):
    out = tmp_path / "out"
    seed = "http://127.0.0.1:9/"
    assert main(["crawl", seed, "-o", str(out), "--quiet"]) == 0
    manifest = out / "_CRAWL.json"
    older = json.loads(manifest.read_text(encoding="utf-8"))
    for name in ("images", "never_empty", "max_tokens"):  # options newer than the crawl
        del older[name]
    manifest.write_text(json.dumps(older), encoding="utf-8")
    assert main(["crawl", seed, "-o", str(out), "--quiet", "--resume"]) == 0
    capsys.readouterr()
    assert "different max_tokens" in _error_of(
        capsys, ["crawl", seed, "-o", str(out), "--quiet", "--resume", "--max-tokens", "50"]
    )


def test_help_explains_every_option():
    import argparse

    from blockdex.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    crawl = sub.choices["crawl"]
    for action in crawl._actions:
        assert action.help and len(action.help) > 8, action.option_strings
    text = crawl.format_help()
    assert "robots.txt" in text and "--allow-private" in text and "examples:" in text


# --------------------------------------------------------------------------------------------
# The URL, robots.txt, sitemap and feed rules on their own


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTP://Example.ORG:80/a/./b/../c#part", "http://example.org/a/c"),
        ("https://example.org:443", "https://example.org/"),
        (
            "https://example.org/p?utm_source=x&id=3&UTM_Medium=y&fbclid=z",
            "https://example.org/p?id=3",
        ),
        ("https://example.org/%7euser/a b", "https://example.org/~user/a%20b"),
        ("/relative?x=1", "https://base.example/relative?x=1"),
        ("//other.example/x", "https://other.example/x"),
        ("https://bücher.example/", "https://xn--bcher-kva.example/"),
        ("mailto:a@example.org", None),
        ("javascript:void(0)", None),
        ("https://user:pw@example.org/", None),
        ("http://example.org:99999/", None),
    ],
)
def test_normalize_url(raw, expected):
    assert normalize_url(raw, "https://base.example/dir/page") == expected


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("https://example.org/", "example.org/index.md"),
        ("https://example.org/guide/intro.html", "example.org/guide/intro.md"),
        ("https://example.org/guide/", "example.org/guide/index.md"),
        ("http://127.0.0.1:8080/a/b", "127.0.0.1_8080/a/b.md"),
        ("https://example.org/list?page=2", "example.org/list_" + "%s.md"),
        ("https://example.org/%2E%2E/.env", "example.org/_./_env.md"),
    ],
)
def test_url_to_path_mirrors_the_url_with_safe_names(url, path):
    got = url_to_path(url)
    if "%s" in path:
        assert got.startswith(path.split("%s")[0]) and got.endswith(".md")
        assert got != url_to_path(url.replace("2", "3"))
    else:
        assert got == path


def test_robots_rules_follow_rfc_9309():
    text = """
    # comments and blank lines are fine
    User-agent: otherbot
    Disallow: /

    User-agent: BlockDex
    User-agent: friend
    Disallow: /private/
    Allow: /private/open-*
    Disallow: /*.pdf$
    Crawl-delay: 0.5

    User-agent: *
    Disallow: /

    Sitemap: /sitemap-a.xml
    """
    rules = RobotsRules.parse(text, "blockdex/0.1 (+https://x)", base_url="https://s.example/")
    allowed = {
        "https://s.example/": True,
        "https://s.example/private/x": False,
        "https://s.example/private/open-day": True,  # the longer rule wins
        "https://s.example/doc.pdf": False,
        "https://s.example/doc.pdf?x=1": True,  # $ anchors the end
        "https://s.example/robots.txt": True,
    }
    assert {url: rules.allows(url) for url in allowed} == allowed
    assert rules.delay == 0.5 and rules.sitemaps == ("https://s.example/sitemap-a.xml",)
    others = RobotsRules.parse(text, "somebot/2.0")
    assert not others.allows("https://s.example/") and others.delay is None


def test_sitemaps_and_feeds_parse_in_their_forms():
    base = "https://s.example/"
    urlset = b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>/a</loc></url></urlset>'
    assert parse_sitemap(gzip.compress(urlset), base).pages == ("https://s.example/a",)
    index = b"<sitemapindex><sitemap><loc>https://s.example/s2.xml</loc></sitemap></sitemapindex>"
    assert parse_sitemap(index, base).sitemaps == ("https://s.example/s2.xml",)
    text = b"https://s.example/x\nhttps://s.example/y?utm_source=z\n"
    assert parse_sitemap(text, base).pages == ("https://s.example/x", "https://s.example/y")
    bomb = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><urlset>&a;</urlset>'
    for bad in (b"<html><body>Not found</body></html>", b"<urlset><url>", bomb):
        with pytest.raises(ValueError):
            parse_sitemap(bad, base)
    rdf = (
        b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
        b'xmlns="http://purl.org/rss/1.0/"><item><link>https://s.example/r</link></item></rdf:RDF>'
    )
    assert parse_feed(rdf, base) == ("https://s.example/r",)
    with pytest.raises(ValueError):
        parse_feed(urlset, base)


def test_scopes_and_globs_decide_which_links_are_followed():
    from blockdex.crawl.frontier import Scope, UrlFilter

    host = Scope("host", ["https://docs.example.co.uk/guide/intro.html"])
    domain = Scope("domain", ["https://docs.example.co.uk/guide/intro.html"])
    prefix = Scope("prefix", ["https://docs.example.co.uk/guide/intro.html"])
    cases = {
        "https://docs.example.co.uk/api/x": (True, True, False),
        "http://docs.example.co.uk/guide/y": (True, True, True),
        "https://www.example.co.uk/": (False, True, False),
        "https://other.co.uk/": (False, False, False),
        "https://docs.example.co.uk:8443/guide/z": (False, True, False),
    }
    for url, expected in cases.items():
        assert (host.contains(url), domain.contains(url), prefix.contains(url)) == expected, url
    globs = UrlFilter(include=("*/guide/*",), exclude=("*/guide/old/*",))
    assert globs.accepts("https://d.example/guide/new")
    assert not globs.accepts("https://d.example/guide/old/x")
    assert not globs.accepts("https://d.example/blog/")


def test_near_identical_texts_share_a_fingerprint_and_others_do_not():
    from blockdex.crawl.simhash import SimhashIndex, text_simhash

    text = " ".join(prose("fingerprint", 4))
    index = SimhashIndex(3)
    index.add(text_simhash(text), "https://s.example/original")
    assert index.find(text_simhash(text + " Posted on Monday.")) == "https://s.example/original"
    assert index.find(text_simhash(" ".join(prose("another page", 4)))) is None
    assert text_simhash("too short") is None


def test_a_page_that_hangs_or_kills_its_worker_is_recorded_and_the_crawl_goes_on(tmp_path):
    """Extraction runs in the batch runner's workers: a hang becomes a timeout record, a crash a
    worker_crashed record, the worker is replaced and the other pages are written."""
    out = tmp_path / "out"
    with Site() as site:
        site.routes["/"] = respond(200, article("Start", ["/hang", "/crash", "/fine"]))
        site.routes["/hang"] = respond(200, article("HANG forever", ["/after-hang"]))
        site.routes["/crash"] = respond(200, article("CRASH the worker"))
        for name in ("fine", "after-hang"):
            site.routes[f"/{name}"] = respond(200, article(f"A {name} page"))
        argv = ["crawl", site.base + "/", "-o", str(out), "--allow-private", *FAST]
        predictor = ["--predictor", "_batch_predictors:Misbehaving", "--page-timeout", "2"]
        assert main([*argv, *predictor, "--no-sitemaps"]) == 0
        pages = by_path(read_pages(out), site.base)
        assert pages["/hang"]["error_kind"] == "timeout"
        assert pages["/crash"]["error_kind"] == "worker_crashed"
        assert pages["/fine"]["file"] and pages["/"]["file"]
        # links are read in the worker with the extraction: a page that hangs gives none
        assert "/after-hang" not in pages
        summary = json.loads((out / "_SUMMARY.json").read_text())
        assert summary["workers_replaced"] == 2


def test_the_worker_takes_links_and_canonical_from_the_extractions_one_parse(monkeypatch):
    from blockdex.batch import BatchConfig, PageInput
    from blockdex.crawl.worker import crawl_page_task

    extract_module = sys.modules["blockdex.extract"]  # the name blockdex.extract is the function
    parses = []
    parse_html = extract_module.parse_html
    monkeypatch.setattr(
        extract_module, "parse_html", lambda *a, **k: parses.append(1) or parse_html(*a, **k)
    )
    prose = " ".join(
        f"The owls of the old mill hunt at dusk along hedge number {i} and come back at dawn."
        for i in range(12)
    )
    html = (
        '<html><head><title>Owls</title><meta property="og:url" content="/owls?utm_source=x">'
        '<link rel="alternate" type="application/rss+xml" href="/feed.xml"></head><body>'
        '<nav style="display:none"><a href="/hidden-menu">menu</a></nav>'
        f'<article><h1>Owls</h1><p>{prose}</p><p><a href="more.html#top">more</a></p></article>'
        "</body></html>"
    )
    url = "http://example.org/birds/owls"
    record = crawl_page_task(PageInput("1", url, html=html.encode(), url=url), BatchConfig(jobs=1))
    assert parses == [1] and record["error"] is None
    # the canonical rule is the metadata's: <link rel=canonical>, else og:url (normalised)
    assert record["canonical"] == "http://example.org/owls"
    # every link of the whole page, those cleaning drops (a hidden menu) too
    assert record["links"] == [
        "http://example.org/hidden-menu",
        "http://example.org/birds/more.html",
    ]
    assert record["feeds"] == ["http://example.org/feed.xml"]
