"""Adapters for distributed engines: :mod:`.datatrove` (a ``BaseExtractor``) and :mod:`.ray`
(a callable class for ``Dataset.map_batches``); and for RAG frameworks: :mod:`.langchain` (a
``BaseLoader`` and a ``BaseDocumentTransformer``) and :mod:`.llamaindex` (a ``BaseReader``).
Each needs its optional extra."""
