"""The example MCP server: a small weather service with a deliberately confusable pair.

get_weather (conditions right now) and get_forecast (the days ahead) overlap on purpose: prompts
like "will it rain tomorrow?" sit on their boundary, which is what a tool-selection eval is for.

    python server.py                 # stdio (what toolselect.yaml uses)
    python server.py http PORT       # streamable HTTP on http://127.0.0.1:PORT/mcp
    python server.py sse PORT        # SSE on http://127.0.0.1:PORT/sse

The tools answer with canned text: toolselect never calls them, but a server should still work.
"""

from __future__ import annotations

import sys
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

mcp = MCPServer("weather-example", version="1.0.0", log_level="WARNING")
READS = ToolAnnotations(read_only_hint=True)  # what each tool does: toolselect weighs a wrong pick by it

City = Annotated[str, Field(description="City name, e.g. 'Montreal' or 'São Paulo'")]
Units = Annotated[
    Literal["metric", "imperial"],
    Field(description="metric: °C and km/h; imperial: °F and mph"),
]


@mcp.tool(structured_output=False, annotations=READS)
def get_weather(city: City, units: Units = "metric") -> str:
    """Current weather conditions for a city right now: temperature, wind, humidity and whether it
    is raining or snowing at this moment."""
    return f"{city}: 18°, light rain" if units == "metric" else f"{city}: 64°F, light rain"


@mcp.tool(structured_output=False, annotations=READS)
def get_forecast(
    city: City,
    days: Annotated[int, Field(ge=1, le=10, description="How many days ahead, 1 to 10")] = 3,
    units: Units = "metric",
) -> str:
    """Weather forecast for a city for the coming days: expected temperatures and chance of rain or
    snow, day by day."""
    return f"{city}: {days}-day forecast, mostly sunny"


@mcp.tool(structured_output=False, annotations=READS)
def get_weather_alerts(
    region: Annotated[str, Field(description="City, state or region name")],
    severity: Annotated[
        Literal["minor", "moderate", "severe", "extreme"],
        Field(description="Lowest alert level to include: minor < moderate < severe < extreme"),
    ] = "moderate",
) -> str:
    """Active official warnings and advisories (storm, flood, heat, wildfire smoke) issued for a
    region by the national weather service."""
    return f"No active alerts for {region} at {severity} or above"


@mcp.tool(structured_output=False, annotations=READS)
def get_air_quality(city: City) -> str:
    """Air quality index (AQI) and pollutant levels (PM2.5, ozone) for a city, with health advice."""
    return f"{city}: AQI 42 (good)"


@mcp.tool(structured_output=False, annotations=READS)
def convert_temperature(
    value: Annotated[float, Field(description="The temperature to convert")],
    from_unit: Annotated[Literal["C", "F", "K"], Field(description="Unit of the value: C, F or K")],
    to_unit: Annotated[Literal["C", "F", "K"], Field(description="Unit to convert to: C, F or K")],
) -> str:
    """Convert a temperature between Celsius, Fahrenheit and Kelvin."""
    return f"{value} {from_unit} in {to_unit}"


@mcp.tool(structured_output=False, annotations=READS)
def search_web(
    query: Annotated[str, Field(description="What to search for")],
    max_results: Annotated[int, Field(ge=1, le=10, description="Number of results, 1 to 10")] = 5,
) -> str:
    """Search the web for pages about any topic that the other tools don't cover: news, facts,
    people, places."""
    return f"{max_results} results for {query!r}"


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        mcp.run()
    elif mode in ("http", "sse"):
        port = int(sys.argv[2]) if len(sys.argv) > 2 else 8000
        mcp.run("streamable-http" if mode == "http" else "sse", host="127.0.0.1", port=port)
    else:
        sys.exit(f"usage: {sys.argv[0]} [stdio | http PORT | sse PORT]")


if __name__ == "__main__":
    main()
