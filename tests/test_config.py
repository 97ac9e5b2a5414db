"""Settings: defaults, config.json, environment overrides, clear errors."""

from __future__ import annotations

import json

import pytest

from ikigai_core.config import Settings, load_settings
from ikigai_core.errors import ConfigError
from ikigai_core.statefiles import ikigai_home


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


def test_log_from_file_and_environment(tmp_path):
    assert load_settings(tmp_path, {}).log is True
    (tmp_path / "config.json").write_text('{"log": false}')
    assert load_settings(tmp_path, {}).log is False
    assert load_settings(tmp_path, {"IKIGAI_LOG": "true"}).log is True


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{oops", "is not valid JSON"),
        ("[]", "must hold a JSON object"),
        ('{"tool_timout": 3}', "unknown key 'tool_timout'"),
    ],
)
def test_bad_config_file_is_one_clear_error(tmp_path, content, message):
    (tmp_path / "config.json").write_text(content)
    with pytest.raises(ConfigError, match=message) as exc:
        load_settings(tmp_path, {})
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize(
    ("content", "key", "message"),
    [
        ('{"tool_timeout": -1}', "tool_timeout", "'tool_timeout' must be a positive float"),
        ('{"tool_timeout": true}', "tool_timeout", "'tool_timeout' must be a positive float"),
        ('{"tool_max_output": 1.5}', "tool_max_output", "'tool_max_output' must be a positive int"),
        ('{"provider": ""}', "provider", "'provider' must be a non-empty string"),
        ('{"log": "no"}', "log", "'log' must be true or false"),
        ('{"log": 0}', "log", "'log' must be true or false"),
    ],
)
def test_a_bad_value_is_one_clear_error_where_it_is_read(tmp_path, content, key, message):
    (tmp_path / "config.json").write_text(content)
    settings = load_settings(tmp_path, {})
    assert settings.schema_timeout == 1.0  # the others still work
    with pytest.raises(ConfigError, match=message) as exc:
        getattr(settings, key)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("content", ["", "  \n"])
def test_an_empty_config_file_holds_no_settings(tmp_path, content):
    (tmp_path / "config.json").write_text(content)
    assert load_settings(tmp_path, {}) == Settings()


def test_the_environment_overrides_a_bad_value_in_the_file(tmp_path):
    (tmp_path / "config.json").write_text('{"max_turns": 0}')
    assert load_settings(tmp_path, {"IKIGAI_MAX_TURNS": "3"}).max_turns == 3


def test_a_relative_home_is_resolved_once_from_the_starting_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    home = ikigai_home({"IKIGAI_HOME": "state/../ik"})
    assert home == tmp_path / "ik" and home.is_absolute()


def test_bad_environment_value_names_the_variable(tmp_path):
    settings = load_settings(tmp_path, {"IKIGAI_TOOL_TIMEOUT": "soon"})
    with pytest.raises(ConfigError, match="environment variable IKIGAI_TOOL_TIMEOUT: "
                                          "'tool_timeout' must be a positive float"):
        assert settings.tool_timeout is None  # raises first


def test_agents_settings_default_and_are_validated(tmp_path):
    settings = load_settings(tmp_path, {})
    assert (settings.agents_max_running, settings.agents_max_depth) == (4, 2)
    assert (settings.agents_budget_tokens, settings.agents_budget_turns,
            settings.agents_budget_seconds) == (200_000, 25, 600.0)
    assert (settings.agents_api_sandbox, settings.agents_api_mcp) == (True, False)
    (tmp_path / "config.json").write_text('{"agents_max_running": 8, "agents_api_mcp": true}')
    settings = load_settings(tmp_path, {"IKIGAI_AGENTS_BUDGET_SECONDS": "30.5"})
    assert (settings.agents_max_running, settings.agents_api_mcp) == (8, True)
    assert settings.agents_budget_seconds == 30.5
    bad = load_settings(tmp_path, {"IKIGAI_AGENTS_MAX_DEPTH": "1.5"})
    with pytest.raises(ConfigError, match="IKIGAI_AGENTS_MAX_DEPTH: 'agents_max_depth' must "
                       "be a positive int, got 1.5; fix"):
        assert bad.agents_max_depth is None  # raises first
    assert bad.agents_max_running == 8  # the others still read
