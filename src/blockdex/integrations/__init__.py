"""Adapters for distributed engines: :mod:`.datatrove` (a ``BaseExtractor``) and :mod:`.ray`
(a callable class for ``Dataset.map_batches``). Each needs its optional extra."""
