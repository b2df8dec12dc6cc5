"""``blockdex crawl``: a site — seeds, a list of URLs, its sitemaps and feeds — to one clean
Markdown file per page.

One module per job:

* :mod:`~blockdex.crawl.config` — what a crawl is asked to do, and the summary of what it did;
* :mod:`~blockdex.crawl.frontier` — which URLs belong to the crawl, and the queued URLs;
* :mod:`~blockdex.crawl.politeness` — robots.txt, per-host request clocks, ``Retry-After``;
* :mod:`~blockdex.crawl.fetching` — every request and redirect hop under the fetch rules;
* :mod:`~blockdex.crawl.discovery` — sitemaps and feeds (a page's own links come from its
  extraction: :func:`blockdex.urls.read_page_links`);
* :mod:`~blockdex.crawl.worker` — extraction in worker processes;
* :mod:`~blockdex.crawl.simhash` — near-duplicate texts;
* :mod:`~blockdex.crawl.store` — the output directory, written so that a crawl resumes exactly;
* :mod:`~blockdex.crawl.crawler` — the engine that runs the phases, and :func:`run_crawl`.

The command line (``blockdex crawl``) is :mod:`blockdex.cli.crawl`.
"""

from blockdex.crawl.config import CrawlConfig, CrawlSummary
from blockdex.crawl.crawler import Crawler, run_crawl

__all__ = ["CrawlConfig", "CrawlSummary", "Crawler", "run_crawl"]
