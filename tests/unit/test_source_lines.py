"""Where a tool is declared in a server's sources: its description, then its registration, never a
same-named helper."""

from __future__ import annotations

from pathlib import Path

from toolselect.locate import source_lines


def write(root: Path, name: str, text: str) -> None:
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(text)


def test_the_description_line_wins_over_a_helper_of_the_same_name(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # places are said from the working folder
    write(tmp_path, "a_helpers/weather.py", "def get_weather(city):\n    return fetch(city)\n")
    write(
        tmp_path,
        "server/tools.py",
        "@mcp.tool(\n    annotations=READ_ONLY,\n)\ndef get_weather(city: str) -> str:\n"
        '    """Current weather for a city:\n    temperature and conditions."""\n'
        "    return helpers.get_weather(city)\n",
    )
    write(
        tmp_path,
        "src/index.ts",
        'function get_forecast(city: string) { return [] }\n\nserver.tool(\n  "get_forecast",\n'
        '  "Forecast for the next days, " +\n  "day by day",\n  schema,\n)\n',
    )
    places = source_lines(
        tmp_path,
        {
            "get_weather": "Current weather for a city: temperature and conditions.",
            "get_forecast": "Forecast for the next days, day by day",
            "undescribed": "",
        },
    )
    assert places["get_weather"] == ("server/tools.py", 5)  # the docstring, not a_helpers/weather.py:1
    assert places["get_forecast"] == ("src/index.ts", 5)  # the description's first line, not the function
    assert "undescribed" not in places


def test_without_its_description_a_decorated_function_wins_over_a_plain_one(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "a/ops.py", "def delete_note(cell):\n    pass\n")
    write(
        tmp_path,
        "b/tools.py",
        "@tools.destroyer('Delete note')\n\ndef other():\n    pass\n\n"
        "@tools.destroyer('x')\ndef delete_note(cell):\n    pass\n",
    )
    assert source_lines(tmp_path, {"delete_note": "A description written somewhere else."}) == {
        "delete_note": ("b/tools.py", 7)
    }
