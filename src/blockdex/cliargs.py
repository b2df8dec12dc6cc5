"""How messages name a pipeline setting: beside its Python name, the command-line option that
sets it (the extraction options themselves are declared in :mod:`blockdex.options`)."""

from __future__ import annotations

SETTING_OPTIONS = {
    "ParseLimits.max_input_bytes": "--max-bytes",
    "ParseLimits.max_dom_nodes": "--max-nodes",
    "ParseLimits.max_depth": "--max-depth",
    "ExtractConfig.time_budget_s": "--time-budget",
}
"""The command-line option that sets each setting (``blockdex extract``, ``blocks``,
``explain``): a warning or an error about a limit names it beside the Python setting."""


def setting_name(setting: str) -> str:
    """How a message names ``setting`` (``ParseLimits.max_dom_nodes``): with its command-line
    option, when it has one (``--max-nodes or ParseLimits.max_dom_nodes``)."""
    flag = SETTING_OPTIONS.get(setting)
    return f"{flag} or {setting}" if flag else setting
