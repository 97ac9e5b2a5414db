"""Skills: the format, the layers, ``ikigai skill``, the ``load_skill`` tool, toolsets."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from ikigai_core import hookimpl
from ikigai_core.app import App
from ikigai_core.cli import cli
from ikigai_core.config import Settings, load_settings
from ikigai_core.errors import ConfigError, UsageError
from ikigai_core.skills import (
    INDEX_LINE_CHARS,
    MAX_SKILL_BYTES,
    Skill,
    SkillDirectory,
    SkippedSkill,
    read_skill,
)
from ikigai_core.tools import Tool
from ikigai_core.toolset import Toolset
from ikigai_core.trust import TrustStore

PUBLIC = Path(__file__).parent / "skills"


def write_skill(directory: Path, name: str, description: str = "Use it for tests.",
                body: str = "# Steps\n\nDo the thing.\n", extra: str = "") -> Path:
    """An Agent Skills folder ``directory/name/SKILL.md``; returns the file."""
    path = directory / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}")
    return path


def invoke(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


# -- The format -------------------------------------------------------------------------


def test_agent_skill_gives_name_description_body_tools_and_tools_folder(tmp_path):
    path = write_skill(tmp_path, "db", extra="tools: [db_query, bash]\nlicense: MIT\n")
    (path.parent / "tools").mkdir()
    skill = read_skill(path, "user")
    assert skill == Skill("db", "Use it for tests.", path, "# Steps\n\nDo the thing.", "user",
                          ("db_query", "bash"), path.parent / "tools")


def test_seed_skill_is_one_markdown_file_named_after_it(tmp_path):
    path = tmp_path / "database.md"
    path.write_text("# Database\n\nSchema documentation, query patterns.\n\n- `database-query`\n")
    skill = read_skill(path, "user")
    assert (skill.name, skill.description, skill.tools_dir) == (
        "database", "Schema documentation, query patterns.", None)
    assert skill.body.startswith("# Database")
    title_only = tmp_path / "notes.md"
    title_only.write_text("# Only a title\n")
    assert read_skill(title_only, "user").description == "Only a title"


@pytest.mark.parametrize("text, reason", [
    ("# no front matter\n", "no front matter: start SKILL.md with ---"),
    ("---\nname: x\ndescription: d\n", "front matter is not closed by a line '---'"),
    ("---\nname: [x\n---\n", "bad front matter at line 3: "),
    ("---\n- a list\n---\n", "front matter must be a mapping"),
    ("---\ndescription: d\n---\n", "front matter 'name' must be 1-64 of A-Z a-z 0-9 _ -, got None"),
    ("---\nname: has space\ndescription: d\n---\n", "'name' must be 1-64"),
    ("---\nname: x\n---\n", "no description: add 'description:'"),
    ("---\nname: x\ndescription: d\ntools: 7\n---\n", "'tools' must be a list of tool names"),
    ("---\nname: x\ndescription: d\ntools: [ok, 'not ok']\n---\n", "'tools' must be a list"),
])
def test_malformed_skill_is_skipped_with_its_reason(tmp_path, text, reason):
    path = tmp_path / "broken" / "SKILL.md"
    path.parent.mkdir()
    path.write_text(text)
    skipped = read_skill(path, "user")
    assert isinstance(skipped, SkippedSkill) and skipped.path == path
    assert skipped.reason.startswith(reason) or reason in skipped.reason, skipped.reason


def test_unreadable_not_utf8_and_huge_files_are_skipped(tmp_path):
    assert read_skill(tmp_path / "gone.md", "user").reason == "cannot read: No such file or directory"
    (tmp_path / "latin.md").write_bytes(b"caf\xe9\n")
    assert read_skill(tmp_path / "latin.md", "user").reason == "not UTF-8 text"
    (tmp_path / "big.md").write_text("x" * (MAX_SKILL_BYTES + 1))
    assert read_skill(tmp_path / "big.md", "user").reason == "larger than 256 KiB"


def test_tools_may_be_a_comma_separated_string(tmp_path):
    path = write_skill(tmp_path, "s", extra="tools: a, b\n")
    assert read_skill(path, "user").tools == ("a", "b")


def test_a_directory_holds_folders_and_files_and_ignores_the_rest(tmp_path):
    write_skill(tmp_path, "alpha")
    (tmp_path / "beta.md").write_text("Beta does things.\n")
    (tmp_path / ".hidden.md").write_text("hidden\n")
    (tmp_path / "notes.txt").write_text("not a skill\n")
    (tmp_path / "empty-folder").mkdir()
    scan = SkillDirectory(tmp_path, name="user", precedence=10).scan()
    assert [s.name for s in scan.skills] == ["alpha", "beta"] and scan.skipped == []
    assert SkillDirectory(tmp_path / "missing", name="user", precedence=10).scan().skills == ()
    (tmp_path / "file").write_text("")
    unreadable = SkillDirectory(tmp_path / "file", name="user", precedence=10).scan()
    assert unreadable.skills == ()


def test_index_lines_are_bounded_and_on_one_line(tmp_path):
    skill = read_skill(write_skill(tmp_path, "long", description="word " * 200), "user")
    line = skill.index_line()
    assert len(line) == INDEX_LINE_CHARS and line.endswith("…") and "\n" not in line


def test_the_public_agent_skill_loads_unchanged():
    """Anthropic's internal-comms skill (Apache-2.0, tests/skills/README.md), as published."""
    path = PUBLIC / "internal-comms" / "SKILL.md"
    skill = read_skill(path, "user")
    assert isinstance(skill, Skill), skill
    assert skill.name == "internal-comms"
    assert skill.description.startswith("A set of resources to help me write all kinds of")
    text = path.read_text()
    assert skill.body == text.split("---\n", 2)[2].strip()


# -- Layers -------------------------------------------------------------------------------


class Shipped:
    """A plugin shipping skills (the system layer)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @hookimpl
    def ikigai_skill_sources(self, home, cwd):
        return [SkillDirectory(self.directory, name="acme", precedence=0)]


def test_layers_later_wins_and_project_needs_trust(isolated_home, tmp_path):
    system = tmp_path / "shipped"
    write_skill(system, "shared", "from the plugin")
    write_skill(system, "plugin-only", "only the plugin has it")
    write_skill(isolated_home / "skills", "shared", "from the user")
    project = tmp_path / "project"
    write_skill(project / ".ikigai" / "skills", "shared", "from the project")

    def index():
        app = App(environ={"IKIGAI_HOME": str(isolated_home)}, cwd=project)
        app.pm.register(Shipped(system), name="acme")
        return app.skills

    skills = index()
    assert {n: s.description for n, s in skills.items()} == {
        "plugin-only": "only the plugin has it", "shared": "from the user"}
    untrusted = [s for s in skills.skipped if s.kind == "untrusted"]
    assert [(s.name, s.reason) for s in untrusted] == [
        ("shared", f"project directory not trusted; run `ikigai trust {project.resolve()}`")]
    TrustStore(isolated_home).trust(project)
    skills = index()
    assert skills["shared"].description == "from the project"
    assert sorted((s.source, s.reason.split(" at ")[0]) for s in skills.skipped) == [
        ("acme", "overridden by the user skill"), ("user", "overridden by the project skill")]


def test_a_broken_plugin_source_is_reported_and_the_others_stay(isolated_home, tmp_path):
    class Broken:
        @hookimpl
        def ikigai_skill_sources(self):
            return [SkillDirectory(tmp_path, name="broken", precedence=0)]

    class Failing(SkillDirectory):
        def scan(self):
            raise RuntimeError("disk on fire")

    class Raising:
        @hookimpl
        def ikigai_skill_sources(self):
            return [Failing(tmp_path, name="failing", precedence=0)]

    write_skill(isolated_home / "skills", "mine")
    app = App(environ={"IKIGAI_HOME": str(isolated_home)}, cwd=tmp_path)
    app.pm.register(Broken(), name="broken")
    app.pm.register(Raising(), name="raising")
    assert list(app.skills) == ["mine"]
    assert [n.message for n in app.notices] == [
        "plugin 'raising' failed scanning skill source 'failing': RuntimeError: disk on fire; "
        "its skills are skipped"]


# -- ikigai skill -------------------------------------------------------------------------


def test_skill_list_text_json_and_skipped_on_stderr(isolated_home):
    write_skill(isolated_home / "skills", "alpha", "First skill.", extra="tools: [bash]\n")
    (isolated_home / "skills" / "beta.md").write_text("Beta does things.\n")
    (isolated_home / "skills" / "bad.md").write_text("---\nname: [\n---\n")
    result = invoke("skill", "list")
    assert result.exit_code == 0
    assert result.stdout == "alpha  user      First skill.\nbeta   user      Beta does things.\n"
    assert result.stderr.startswith(f"ikigai: skipped user skill 'bad' "
                                    f"({isolated_home / 'skills' / 'bad.md'}): bad front matter")
    listed = json.loads(invoke("skill", "list", "--json").stdout)
    assert listed[0] == {"name": "alpha", "description": "First skill.", "source": "user",
                         "path": str(isolated_home / "skills" / "alpha" / "SKILL.md"),
                         "tools": ["bash"], "tools_dir": None}


def test_skill_list_with_none_says_where_they_go(isolated_home):
    result = invoke("skill", "list")
    assert result.stdout == ""
    assert result.stderr == f"ikigai: no skills found; put them in {isolated_home / 'skills'}\n"


def test_skill_show_and_its_errors(isolated_home):
    path = write_skill(isolated_home / "skills", "alpha", "First skill.")
    (path.parent / "tools").mkdir()
    (isolated_home / "skills" / "bad.md").write_text("---\nname: bad\n---\n")
    result = invoke("skill", "show", "alpha")
    assert result.stdout == (f"Skill: alpha\nSource: user\nPath: {path}\nDescription: First "
                             f"skill.\nTools: none named (and {path.parent / 'tools'})\n\n"
                             "# Steps\n\nDo the thing.\n")
    unknown = invoke("skill", "show", "nope")
    assert (unknown.exit_code, unknown.stderr) == (
        1, "ikigai: unknown skill 'nope'; see `ikigai skill list`\n")
    broken = invoke("skill", "show", "bad")
    assert broken.exit_code == 1
    assert broken.stderr.endswith("ikigai: skill 'bad' was not loaded: no description: add "
                                  "'description:' to the front matter saying when to use the skill\n")


# -- The load_skill tool -------------------------------------------------------------------


def test_load_skill_tool_is_there_only_with_skills_and_returns_the_body(isolated_home):
    assert "load_skill" not in App().registry()
    shutil.copytree(PUBLIC / "internal-comms", isolated_home / "skills" / "internal-comms")
    result = invoke("tool", "run", "load_skill", '{"name": "internal-comms"}')
    assert result.exit_code == 0, result.output
    envelope = json.loads(result.stdout)
    skill_dir = isolated_home / "skills" / "internal-comms"
    assert envelope == {"tool_success": True, "result": {
        "skill": "internal-comms", "directory": str(skill_dir),
        "output": read_skill(skill_dir / "SKILL.md", "user").body}}
    missing = json.loads(invoke("tool", "run", "load_skill", '{"name": "nope"}').stdout)
    assert missing["result"] == {"error": "no skill named 'nope'; the skills are: internal-comms",
                                 "error_code": "NOT_FOUND"}


def test_load_skill_tool_reports_a_skill_broken_since_start(isolated_home, tmp_path):
    path = write_skill(isolated_home / "skills", "fragile")
    registry = App().registry()
    path.write_text("no front matter any more\n")
    called = App().executor.call(registry, "load_skill", {"name": "fragile"})
    assert called.outcome.result == {
        "error": "skill 'fragile' cannot be read: no front matter: start SKILL.md with ---, "
                 "name:, description:, ---", "error_code": "READ_FAILED"}


def test_load_skill_schema_is_the_protocol(isolated_home):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "ikigai_tools_builtin.load_skill_tool",
                           "a=/x/SKILL.md", "--schema"], capture_output=True, text=True,
                          timeout=30)
    assert json.loads(done.stdout)["name"] == "load_skill"


# -- Toolsets --------------------------------------------------------------------------------


def _tool(name: str, source: str = "system") -> Tool:
    return Tool(name, "d", {"type": "object"}, (name,), source)


REGISTRY = {t.name: t for t in (_tool("bash"), _tool("grep"), _tool("load_skill"),
                                _tool("db_query", "skill:db"), _tool("other", "user"))}


def _skill(name: str, tools: tuple[str, ...] = ()) -> Skill:
    return Skill(name, "d", Path(f"/s/{name}/SKILL.md"), "body", "user", tools)


def names(toolset: Toolset) -> list[str]:
    return [tool.name for tool in toolset.tools(REGISTRY)]


def test_toolset_hides_skill_tools_until_the_skill_is_loaded():
    toolset = Toolset.chosen(Settings(), {"db": _skill("db", ("other",))}, tools="bash")
    assert names(toolset) == ["bash"]
    toolset.load("db")
    toolset.load("db")
    assert names(toolset) == ["bash", "db_query", "other"]
    assert toolset.describe(REGISTRY) == "Tools sent: bash, db_query, other (skills loaded: db)"
    with pytest.raises(UsageError, match="unknown skill 'nope'; skills: db"):
        toolset.load("nope")
    assert names(Toolset.chosen(Settings(), {})) == ["bash", "grep", "load_skill", "other"]


def test_toolset_from_config_and_flags():
    settings = Settings(enabled_tools=("bash", "grep"), disabled_tools=("grep",))
    assert names(Toolset.chosen(settings, {})) == ["bash", "grep"]  # enabled wins
    assert names(Toolset.chosen(Settings(disabled_tools=("grep",)), {})) == [
        "bash", "load_skill", "other"]
    assert names(Toolset.chosen(settings, {}, no_tools=True)) == []
    assert names(Toolset.chosen(settings, {}, tools="other, db_query")) == ["db_query", "other"]
    assert Toolset().describe({}) == "Tools sent: none"
    with pytest.raises(UsageError, match=r"enabled_tools/disabled_tools in config.json: no "
                                         r"tool named 'nope'; `ikigai tool list` shows"):
        Toolset.chosen(Settings(disabled_tools=("nope",)), {}).verify(REGISTRY)


def test_toolset_choose():
    toolset = Toolset()
    toolset.choose("bash grep", REGISTRY)
    assert names(toolset) == ["bash", "grep"]
    toolset.choose("none", REGISTRY)
    assert names(toolset) == []
    toolset.choose("all", REGISTRY)
    assert names(toolset) == ["bash", "grep", "load_skill", "other"]
    with pytest.raises(UsageError, match="/toolset: no tool named 'x', 'y'"):
        toolset.choose("x,y", REGISTRY)


def test_config_keys_for_the_prompt_and_the_toolset(isolated_home):
    (isolated_home / "config.json").write_text(json.dumps({
        "system_prompt": "Be brief.", "enabled_tools": ["bash"], "disabled_tools": "a, b"}))
    settings = load_settings(isolated_home, {})
    assert (settings.system_prompt, settings.enabled_tools, settings.disabled_tools) == (
        "Be brief.", ("bash",), ("a", "b"))
    (isolated_home / "config.json").write_text(json.dumps({"enabled_tools": [1]}))
    settings = load_settings(isolated_home, {})  # a wrong value stops only what reads it
    with pytest.raises(ConfigError, match="'enabled_tools' must be a list of tool names, got "):
        settings.enabled_tools  # noqa: B018


def test_skill_source_docstring_example_is_runnable(tmp_path):
    """The plugin side of docs/plugins.md's Skills section, end to end."""
    source = SkillDirectory(tmp_path, name="acme", precedence=0)
    (tmp_path / "x.md").write_text(textwrap.dedent("""\
        ---
        description: From front matter.
        ---
        Body.
    """))
    assert source.scan().skills[0].description == "From front matter."
    assert repr(source) == f"SkillDirectory({str(tmp_path)!r}, name='acme')"


def test_skill_show_keeps_joiners_and_escapes_what_reorders(isolated_home):
    """A skill's text is prose: U+200D keeps an emoji whole; U+202E is shown escaped."""
    write_skill(isolated_home / "skills", "emoji",
                body="Ask the \U0001F469\u200d\U0001F4BB, not \u202eevil.\n")
    shown = invoke("skill", "show", "emoji").stdout
    assert "\U0001F469\u200d\U0001F4BB" in shown and "\\u202eevil" in shown
