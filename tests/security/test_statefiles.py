"""The state-file primitives under the CLI tests: every way a write fails keeps the old file
and leaves no temp file; a shared sticky folder is no home."""

from __future__ import annotations

import os

import pytest

from ikigai_core.errors import ConfigError
from ikigai_core.statefiles import WriteError, ikigai_home, refuse_exposed, write_private_json


def test_a_folder_that_cannot_be_made_is_one_write_error(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(WriteError, match=r"^cannot write .*/file/x\.json: Not a directory$") as exc:
        write_private_json(tmp_path / "file" / "x.json", {})
    assert isinstance(exc.value, OSError) and exc.value.strerror == "Not a directory"


def test_data_that_is_not_json_keeps_the_old_file_and_no_temp_file(tmp_path):
    (tmp_path / "x.json").write_text("old")
    with pytest.raises(TypeError):
        write_private_json(tmp_path / "x.json", {"x": object()})
    assert (tmp_path / "x.json").read_text() == "old" and os.listdir(tmp_path) == ["x.json"]


def test_a_shared_sticky_folder_is_no_home(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    with pytest.raises(ConfigError, match="mode 1777.*set IKIGAI_HOME to a folder of your own"):
        ikigai_home({"IKIGAI_HOME": str(shared)})


def test_a_group_writable_file_of_a_group_nobody_knows_is_refused(tmp_path):
    unknown = 54321
    path = tmp_path / "config.json"
    path.write_text("{}")
    os.chown(path, -1, unknown)
    path.chmod(0o660)
    with pytest.raises(ConfigError, match=r"mode 660\); ikigai refuses it: `chmod go-w "):
        refuse_exposed(path)
