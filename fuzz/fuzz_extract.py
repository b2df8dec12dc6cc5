"""An atheris (libFuzzer) target: extraction raises nothing but BlockdexError, on any bytes.

Install the fuzzer separately (it is a fuzz-only tool, not a dependency of blockdex)::

    pip install atheris
    python fuzz/fuzz_extract.py -max_total_time=600            # ten minutes
    python fuzz/fuzz_extract.py -max_total_time=600 -timeout=20 fuzz/corpus  # keep a corpus dir

Each input is tried as bytes (encoding detection) and, decoded, as text, in the ``json`` output
format; the text also with an address (the page-kind rules of ``predict/kinds.py`` and the page
type's address columns read only pages with one). A ``BlockdexError`` is the documented way to
refuse input and is swallowed; any other exception, invalid output, or a selection outside the
page is re-raised, and libFuzzer stores the crashing input as ``crash-<sha1>``. ``-timeout`` turns hangs into findings too.
"""

from __future__ import annotations

import json
import sys

import atheris

with atheris.instrument_imports(include=["blockdex"]):
    import blockdex
    from blockdex.errors import BlockdexError


SHOP_URL = "https://shop.example/c/boots?page=2"
"""An address whose shape says collection or listing to the page type (the rules then run)."""


def _check(data: bytes | str, url: str | None = None) -> None:
    try:
        out = blockdex.extract(data, url=url, output="json")
    except BlockdexError:
        return
    out.encode("utf-8")
    record = json.loads(out)
    n = record["n_blocks"]
    for a, b in record["intervals"]:
        if not 0 <= a <= b < n:
            raise AssertionError(f"interval [{a},{b}] outside [0,{n})")


def test_one_input(data: bytes) -> None:
    _check(data)
    text = atheris.FuzzedDataProvider(data).ConsumeUnicodeNoSurrogates(len(data))
    _check(text)
    _check(text, SHOP_URL)


def main() -> None:
    blockdex.extract("<p>load the model before fuzzing</p>")
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
