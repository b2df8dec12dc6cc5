"""``blockdex crawl``: a site to one clean file per page (the crawl itself: :mod:`blockdex.crawl`)."""

from __future__ import annotations

import argparse

from blockdex.cli.common import Setting, add_run_arguments, add_settings, report
from blockdex.crawl import CrawlConfig, run_crawl
from blockdex.crawl.frontier import SCOPES
from blockdex.errors import BlockdexError
from blockdex.fetch import FetchConfig
from blockdex.inputs import read_file
from blockdex.options import ExtractOptions, add_option_arguments

NAME = "crawl"
HELP = "crawl a site (seeds, sitemaps, feeds) into one Markdown file per page"
DESCRIPTION = (
    "Crawl from seed URLs: fetch each page politely and safely, extract its main\n"
    "content (or what answers --query) to one file per page, follow its links within\n"
    "the scope, read the site's sitemaps and feeds. Every URL dealt with ends as one\n"
    "record in pages.jsonl: the page, a duplicate of another, or an error and why."
)
EPILOG = """\
output (in --out DIR):
  <host>/<path>.md   one file per page, mirroring its URL (index.md for a path ending in /)
  pages.jsonl        one record per URL: url, final_url, status, title, metadata, content,
                     links, fetched_at, file, duplicate_of, error, error_kind …
  _SUMMARY.json      counts, times, and each host's politeness settings
  pages.warc.gz      with --warc: the fetched HTML, for 'blockdex batch pages.warc.gz'

politeness: robots.txt is obeyed for the user agent's product token ('blockdex'), with its
Crawl-delay; at most --per-host requests in flight per host, --delay seconds between their
starts; 429/503 answers are retried after Retry-After with backoff (--retries, --retry-cap);
responses that are not HTML are dropped on their headers.

safety: every request and every redirect hop is refused when it goes to a private, loopback,
link-local or cloud-metadata address (--allow-private lifts all but metadata), over
--max-bytes or over the time limits. Refused URLs are recorded with the reason.

examples:
  blockdex crawl https://docs.example.org/ --out docs-md/
  blockdex crawl https://example.org/blog/ --scope prefix --depth 2 --out blog/ --warc
  blockdex crawl -i urls.txt --depth 0 --out pages/ --format json
  blockdex crawl --feed https://example.org/feed.xml --out news/ --no-comments
  blockdex crawl https://docs.example.org/ --out docs-md/ --resume    after a crash or kill
"""

WHOLE_REQUEST = CrawlConfig().fetch.max_seconds
REACH: tuple[Setting, ...] = (
    ("--depth", "N", "link hops from a seed (0: only the seeds; a sitemap entry is one hop)"),
    ("--max-pages", "N", "pages fetched at most, over resumed runs too (0: no limit)"),
)
POLITENESS: tuple[Setting, ...] = (
    ("--per-host", "N", "requests in flight to one host at most"),
    ("--delay", "S", "seconds between two request starts on one host; a longer Crawl-delay wins"),
    ("--concurrency", "N", "requests in flight over all hosts"),
    ("--retries", "N", "retries of a page answered 429 or 503 (after Retry-After, or backoff)"),
    ("--retry-cap", "S", "give a page up when its server asks to wait longer than this"),
)
AGENT: tuple[Setting, ...] = (
    ("--user-agent", "UA", "User-Agent header; its first word is the robots.txt token"),
)
LIMITS: tuple[Setting, ...] = (
    ("--max-bytes", "N", "refuse pages larger than N bytes"),
    ("--timeout", "S", f"seconds to connect and per read; {WHOLE_REQUEST:g} s per request at most"),
)
WORKERS: tuple[Setting, ...] = (
    ("-j --jobs", "N", "extraction worker processes"),
    ("--page-timeout", "S", "seconds one page's extraction may take"),
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    defaults = CrawlConfig()
    p.add_argument("seeds", nargs="*", metavar="SEED", help="http(s) URLs to start from")
    p.add_argument(
        "-i", "--input", metavar="FILE", help="read more seed URLs from FILE, one a line"
    )
    add_run_arguments(
        p,
        resume="continue an interrupted crawl in DIR (same seeds and settings): pages recorded"
        " are not fetched again",
    )
    g = p.add_argument_group("what to crawl")
    add_settings(g, defaults, REACH)
    g.add_argument(
        "--scope",
        choices=SCOPES,
        default=defaults.scope,
        help="links followed: 'host' = a seed's host and port, 'domain' = any host of a seed's"
        " domain, 'prefix' = a seed's host below its directory (default: host)",
    )
    for flag, text in (
        ("--include", "follow only URLs matching this glob, e.g. '*/docs/*' (repeatable)"),
        ("--exclude", "never follow URLs matching this glob, e.g. '*/tag/*' (repeatable)"),
        ("--feed", "an RSS/Atom feed whose entries are crawled like seeds (repeatable)"),
    ):
        g.add_argument(
            flag, action="append", metavar="URL" if flag == "--feed" else "GLOB", help=text
        )
    g.add_argument(
        "--no-sitemaps",
        action="store_true",
        help="do not read robots.txt Sitemap: lines and /sitemap.xml",
    )
    g.add_argument(
        "--feeds",
        action="store_true",
        help="also read the feeds pages announce with <link rel=alternate>",
    )
    g = p.add_argument_group("what to keep (as in 'blockdex extract')")
    add_option_arguments(
        g,
        help={
            "format": "format of each page's file: markdown (.md), text, html or json"
            " (default markdown)"
        },
    )
    g.add_argument(
        "--warc",
        action="store_true",
        help="also write the fetched HTML responses to DIR/pages.warc.gz (needs blockdex[batch])",
    )
    g = p.add_argument_group("politeness")
    add_settings(g, defaults, POLITENESS)
    add_settings(g, defaults.fetch, AGENT)
    g = p.add_argument_group("safety and limits")
    g.add_argument(
        "--allow-private",
        action="store_true",
        help="let requests reach loopback, private and link-local addresses (a local or"
        " intranet site); cloud-metadata addresses stay refused",
    )
    g.add_argument(
        "--allow-network",
        action="append",
        metavar="CIDR",
        help="a network requests may reach although the address rule refuses it, e.g."
        " 10.1.2.0/24 (repeatable)",
    )
    add_settings(g, defaults.fetch, LIMITS)
    add_settings(p.add_argument_group("extraction workers"), defaults, WORKERS)


def run_command(args: argparse.Namespace) -> int:
    seeds = list(args.seeds)
    if args.input:
        seeds += read_url_list(args.input)
    fetch = FetchConfig(
        timeout=args.timeout,
        max_seconds=max(args.timeout, WHOLE_REQUEST),
        max_bytes=args.max_bytes,
        user_agent=args.user_agent,
        allow_private=args.allow_private,
        allowed_networks=tuple(args.allow_network or ()),
    )
    cfg = CrawlConfig(
        options=ExtractOptions.from_args(args),
        depth=args.depth,
        max_pages=args.max_pages,
        scope=args.scope,
        include=tuple(args.include or ()),
        exclude=tuple(args.exclude or ()),
        sitemaps=not args.no_sitemaps,
        feeds=tuple(args.feed or ()),
        discover_feeds=args.feeds,
        per_host=args.per_host,
        delay=args.delay,
        concurrency=args.concurrency,
        retries=args.retries,
        retry_cap=args.retry_cap,
        jobs=args.jobs,
        page_timeout=args.page_timeout,
        warc=args.warc,
        fetch=fetch,
    )
    summary = run_crawl(seeds, args.out, cfg, resume=args.resume, progress=not args.quiet)
    return report("crawl", summary, args.out)


def read_url_list(path: str) -> list[str]:
    """The URLs of a ``-i`` file: one a line; blank lines and ``#`` comments skipped."""
    try:
        text = read_file(path, expected="a file of URLs, one a line").decode("utf-8-sig")
    except UnicodeDecodeError:
        raise BlockdexError(f"cannot read {path}: not UTF-8 text (one URL a line)") from None
    lines = text.splitlines()
    return [s.strip() for s in lines if s.strip() and not s.lstrip().startswith("#")]
