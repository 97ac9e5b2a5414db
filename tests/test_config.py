"""Settings: defaults, config.json, environment overrides, clear errors."""

from __future__ import annotations

import json

import pytest

from ikigai_core.config import Settings, ikigai_home, load_settings
from ikigai_core.errors import ConfigError


def test_defaults_match_the_spec(tmp_path):
    settings = load_settings(tmp_path, {})
    assert settings == Settings()
    assert (settings.tool_timeout, settings.tool_max_output) == (30.0, 65536)
    assert (settings.schema_timeout, settings.schema_max_bytes) == (1.0, 8192)
    assert settings.max_turns == 25


def test_home_defaults_to_dot_ikigai(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert ikigai_home({}) == tmp_path / ".ikigai"
    assert ikigai_home({"IKIGAI_HOME": "~/x"}) == tmp_path / "x"


def test_file_then_environment(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(
        {"tool_timeout": 5, "tool_max_output": 1000, "provider": "anthropic"}))
    settings = load_settings(tmp_path, {"IKIGAI_TOOL_TIMEOUT": "2.5", "IKIGAI_MODEL": "m"})
    assert settings.tool_timeout == 2.5
    assert settings.tool_max_output == 1000
    assert (settings.provider, settings.model) == ("anthropic", "m")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{oops", "is not valid JSON"),
        ("[]", "must hold a JSON object"),
        ('{"tool_timout": 3}', "unknown key 'tool_timout'"),
        ('{"tool_timeout": -1}', "'tool_timeout' must be a positive float"),
        ('{"tool_timeout": true}', "'tool_timeout' must be a positive float"),
        ('{"tool_max_output": 1.5}', "'tool_max_output' must be a positive int"),
        ('{"provider": ""}', "'provider' must be a non-empty string"),
    ],
)
def test_bad_config_file_is_one_clear_error(tmp_path, content, message):
    (tmp_path / "config.json").write_text(content)
    with pytest.raises(ConfigError, match=message) as exc:
        load_settings(tmp_path, {})
    assert "\n" not in str(exc.value)


def test_bad_environment_value_names_the_variable(tmp_path):
    with pytest.raises(ConfigError, match="environment variable IKIGAI_TOOL_TIMEOUT: "
                                          "'tool_timeout' must be a positive float"):
        load_settings(tmp_path, {"IKIGAI_TOOL_TIMEOUT": "soon"})
