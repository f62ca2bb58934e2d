"""Serve examples/weather/server.py's MCPServer over streamable HTTP or SSE on a free port.

python serve_example.py [http | sse]      prints PORT=<n>, then serves /mcp or /sse
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from serve import serve_app  # type: ignore[import-not-found]  # noqa: E402

spec = importlib.util.spec_from_file_location("weather_server", HERE.parents[1] / "examples" / "weather" / "server.py")
assert spec is not None and spec.loader is not None
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)

mode = sys.argv[1] if len(sys.argv) > 1 else "http"
app = module.mcp.streamable_http_app(host="127.0.0.1") if mode == "http" else module.mcp.sse_app(host="127.0.0.1")
serve_app(app)
