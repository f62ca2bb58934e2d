"""toolselect: does the model still pick the right MCP tool, with the right arguments?"""

__version__ = "0.1.0"
