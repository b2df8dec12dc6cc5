"""The block explorer's page (``GET /`` and ``POST /`` of the HTTP service): a form for a URL or
pasted HTML and the options, and below it the blocks of the result, kept ones green and dropped
ones red (:func:`blockdex.explain.render_fragment`)."""

from __future__ import annotations

import html as html_lib
from string import Template
from typing import Any

from blockdex.errors import BlockdexError
from blockdex.explain import template
from blockdex.extract import known_methods
from blockdex.options import FAVOR_CHOICES


def _attr(value: str) -> str:
    return html_lib.escape(value, quote=True)


def explorer_page(fields: dict[str, str], result: str = "") -> str:
    """The explorer page with the form filled in from ``fields`` and ``result`` (an HTML
    fragment: the explained page or an error box) below it."""
    predictors, baselines = known_methods()
    chosen = fields.get("method", "")
    options = ['<option value="">default (content; all with a query)</option>']
    for name in [*predictors, *baselines]:
        if name == "oracle":  # needs indices given in advance; nothing to explore
            continue
        selected = " selected" if name == chosen else ""
        label = name if name in predictors else f"{name} (classic)"
        options.append(f'<option value="{_attr(name)}"{selected}>{_attr(label)}</option>')
    return Template(template("explorer.html")).substitute(
        css=template("explorer.css"),
        html=html_lib.escape(fields.get("html", ""), quote=False),
        url=_attr(fields.get("url", "")),
        query=_attr(fields.get("query", "")),
        methods="".join(options),
        no_comments=" checked" if fields.get("no_comments") else "",
        links=" checked" if fields.get("links") else "",
        images=" checked" if fields.get("images") else "",
        favors="".join(
            f'<option value="{f}"{" selected" if f == fields.get("favor", "balanced") else ""}>'
            f"{f}{' (default method, no query)' if f != 'balanced' else ''}</option>"
            for f in FAVOR_CHOICES
        ),
        result=result,
    )


def form_payload(fields: dict[str, str]) -> dict[str, Any]:
    """The explorer form's fields as an extract request (see
    :func:`~blockdex.server.service.parse_extract_request`): empty fields left out, checkboxes
    turned into options."""
    payload: dict[str, Any] = {k: v for k, v in fields.items() if v.strip()}
    payload.pop("submit", None)
    if payload.pop("no_comments", None):
        payload["comments"] = False
    for flag in ("links", "images"):
        if payload.pop(flag, None):
            payload[flag] = True
    return payload


def error_box(exc: BlockdexError) -> str:
    """An error shown where the result would be."""
    return (
        f'<div class="error"><strong>{_attr(exc.kind)}</strong>: '
        f"{html_lib.escape(exc.message, quote=False)}</div>"
    )
