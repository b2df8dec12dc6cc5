"""How messages name a pipeline setting: beside its Python name, the command-line option that
sets it (the extraction options themselves are declared in :mod:`blockdex.options`)."""

from blockdex.errors import SETTING_OPTIONS, setting_name  # noqa: F401  (their home: errors.py)
